"""A client of Sluice's admin API (/admin/v1 on the admin listener),
generated from the API's OpenAPI document (sluice_admin.generated,
ops_gen.py: make clients) with a small hand-written layer:

- client() authenticates every request with an admin token;
- a create is sent with an Idempotency-Key (a fresh one unless the call
  passes idempotency_key=...), so a retry never makes it twice;
- a 429, or a 503 to a request safe to repeat, is retried after its Retry-After;
- every refusal raises ProblemError carrying the API's problem detail;
- every list operation that pages by cursor has an iterator in sluice_admin.iterate.

Operations are the generated modules' functions, e.g.
sluice_admin.generated.api.tenants.create_tenant.sync(client=c, body=...).
"""

from . import ops_gen as iterate
from .client import ProblemError, client, idempotency_key, retry_after

__all__ = ["ProblemError", "client", "idempotency_key", "iterate", "retry_after"]
