"""The optional C kernel of fingerprinting; without a compiler the package runs on numpy alone."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "scrapy_neardup.fingerprints._kernel",
            ["scrapy_neardup/fingerprints/_kernel.c"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
            optional=True,  # a failed build warns; fingerprint.py then uses its numpy path
        )
    ]
)
