-- Signing keys' private halves are kept sealed (store/keyring): a sealed
-- value is longer than the 32-byte seed, so the column takes either a
-- seed an earlier release stored in plaintext (sealed at the next start
-- or by `storefront secrets rewrap`) or a sealed value.

-- +goose Up

ALTER TABLE signing_keys
    DROP CONSTRAINT signing_keys_private_key_check,
    ADD CONSTRAINT signing_keys_private_key_kept
        CHECK (length(private_key) = 32 OR substring(private_key FROM 1 FOR 9) = 'sealed:1:'::bytea);

-- +goose Down

-- Fails while any key is sealed: a release before this one could not
-- read it, and must not be handed it.
ALTER TABLE signing_keys
    DROP CONSTRAINT signing_keys_private_key_kept,
    ADD CONSTRAINT signing_keys_private_key_check CHECK (length(private_key) = 32);
