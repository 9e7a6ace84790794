from redis_server import redis_server, redis_url  # noqa: F401
from local_site import local_site  # noqa: F401
