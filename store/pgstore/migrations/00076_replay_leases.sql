-- Idempotency reservations held under leases.
--
-- A reservation is owned by the random token its request reserved it
-- with, until expires_at (the storefront's clock, never the database's):
-- only that token completes or releases it, and once the lease has ended
-- another request takes the key over under a token of its own, so the
-- first owner's late writes match nothing.

-- +goose Up

ALTER TABLE replays
    ADD COLUMN token text NOT NULL DEFAULT '',
    ADD COLUMN expires_at timestamptz;
-- Reservations made before leases were taken over 60 seconds after they
-- were made; they keep that bound, and having no token, end only by it.
UPDATE replays SET expires_at = created_at + interval '60 seconds';
ALTER TABLE replays ALTER COLUMN expires_at SET NOT NULL;

-- +goose Down

ALTER TABLE replays
    DROP COLUMN expires_at,
    DROP COLUMN token;
