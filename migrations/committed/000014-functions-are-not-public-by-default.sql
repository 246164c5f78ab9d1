--! Previous: sha1:7784b0576ab239d9417d983ce0958d676ae93920
--! Hash: sha1:2b476c91872011742a83fc68e593382f7e70ef37
--! Message: functions are not public by default

-- PostgreSQL grants EXECUTE on every new function to PUBLIC, and that
-- default can only be revoked globally (per role), not per schema: the
-- per-schema `alter default privileges ... revoke` of 000001 had no effect.
-- From here on, a new function is callable only by the roles it is granted to.
alter default privileges revoke execute on functions from public;
