"""The optional C parts: the kernel of fingerprinting (without a compiler the package runs on
numpy alone), a scan that makes a page's markup lighter for lxml's parser (without it lxml
parses the page as it is) and the walks of readability over a page's tree (built against
lxml's headers; without it extraction runs readability's rules in Python)."""

from setuptools import Extension, setup


def _lxml_includes() -> list[str]:
    try:
        import lxml
    except ImportError:  # no lxml where the package is built: extraction runs in Python
        return []
    return lxml.get_include()


_INCLUDES = _lxml_includes()

setup(
    ext_modules=[
        Extension(
            "scrapy_neardup.fingerprints._kernel",
            ["scrapy_neardup/fingerprints/_kernel.c"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
            optional=True,  # a failed build warns; fingerprint.py then uses its numpy path
        ),
        Extension(
            "scrapy_neardup.fingerprints._segment",
            ["scrapy_neardup/fingerprints/_segment.c"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
            optional=True,  # a failed build warns; rjieba then cuts every line (segment.py)
        ),
        Extension(
            "scrapy_neardup.fingerprints._markup",
            ["scrapy_neardup/fingerprints/_markup.c"],
            extra_compile_args=["-O2"],
            optional=True,  # a failed build warns; markup.py then hands lxml the page as it is
        ),
        *(
            [
                Extension(
                    "scrapy_neardup.fingerprints._pagewalk",
                    ["scrapy_neardup/fingerprints/_pagewalk.c"],
                    include_dirs=_INCLUDES,
                    extra_compile_args=["-O2", "-ffp-contract=off"],
                    optional=True,  # a failed build warns; readable.py then runs readability's rules in Python
                )
            ]
            if _INCLUDES
            else []
        ),
    ]
)
