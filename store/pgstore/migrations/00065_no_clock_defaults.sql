-- Every time the store writes comes from the program's one clock, never
-- from the database's: a pinned or shifted clock (tests, a replay of a
-- past day) must see the times it made. Without these defaults a write
-- that forgot its time fails on NOT NULL instead of quietly taking the
-- database's now().

-- +goose Up
ALTER TABLE publishers ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE rulebook_versions ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE accounts ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE directives ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE replays ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE seeded_catalogues ALTER COLUMN seeded_at DROP DEFAULT;

-- +goose Down
ALTER TABLE publishers ALTER COLUMN created_at SET DEFAULT now();
ALTER TABLE rulebook_versions ALTER COLUMN created_at SET DEFAULT now();
ALTER TABLE accounts ALTER COLUMN created_at SET DEFAULT now();
ALTER TABLE directives ALTER COLUMN created_at SET DEFAULT now();
ALTER TABLE replays ALTER COLUMN created_at SET DEFAULT now();
ALTER TABLE seeded_catalogues ALTER COLUMN seeded_at SET DEFAULT now();
