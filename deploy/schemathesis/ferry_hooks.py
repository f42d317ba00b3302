"""Schemathesis hooks for fuzzing Ferry (loaded by deploy/schemathesis.sh).

They run right before every request, in every phase (stateful link values included):

- The operator routes can suspend a tenant, change its quotas or revoke its keys, and the
  stateful phase finds tenant ids in `GET /admin/v1/tenants`. The tenant whose key the fuzzer
  uses for `/v1` (`FERRY_TENANT_ID`) is kept out of their reach, or every `/v1` answer after
  that would be a 401, 403 or 429.
- `GET /v1/tasks/{id}?wait=` long-polls for up to 120 s, and the tasks the fuzzer creates are
  mostly suspended, so an honest `wait` would spend the time budget waiting. Valid waits are
  clamped to one second; invalid ones (negative, too large, not a number) are kept, since Ferry
  must refuse those with a 400.
"""

import os

import schemathesis

PROTECTED_TENANT = os.environ.get("FERRY_TENANT_ID", "")
STAND_IN_TENANT = "ten_protectedFromFuzzing"


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    parameters = case.path_parameters
    if PROTECTED_TENANT and parameters and parameters.get("tenantID") == PROTECTED_TENANT:
        parameters["tenantID"] = STAND_IN_TENANT
    query = case.query
    if query and "wait" in query:
        try:
            seconds = float(query["wait"])
        except (TypeError, ValueError):
            return
        if 0 <= seconds <= 120:
            query["wait"] = min(seconds, 1)
