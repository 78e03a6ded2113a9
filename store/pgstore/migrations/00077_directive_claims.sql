-- Compliance directives claimed by the call that would answer with them.
--
-- A call claims a directive under a random token until claimed_until (the
-- storefront's clock); it deletes the directive only once it has answered
-- with it, and clears its claim if it is refused. A claim whose call died
-- runs out, and the directive is the next call's.

-- +goose Up

ALTER TABLE directives
    ADD COLUMN claim_token text NOT NULL DEFAULT '',
    ADD COLUMN claimed_until timestamptz,
    ADD CONSTRAINT directives_claim CHECK ((claim_token = '') = (claimed_until IS NULL));

-- +goose Down

ALTER TABLE directives
    DROP CONSTRAINT directives_claim,
    DROP COLUMN claimed_until,
    DROP COLUMN claim_token;
