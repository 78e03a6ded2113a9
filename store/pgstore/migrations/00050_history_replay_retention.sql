-- Catalogue history, the requests a backtest replays, and what retention
-- needs to find old rows quickly.

-- +goose Up

-- Every catalogue edit is a version, as every rulebook save is. A version
-- row says who made it and why; catalogue_changes holds, for each product
-- the version changed, the product as the version left it (NULL: the
-- version deleted it). The state of any product at any version is its
-- newest change at or below that version, which is what diff and rollback
-- read.
CREATE TABLE catalogue_versions (
    publisher_id     text NOT NULL REFERENCES publishers (id),
    version          bigint NOT NULL CHECK (version >= 1),
    author           text NOT NULL DEFAULT '',
    note             text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL,
    products_put     bigint NOT NULL DEFAULT 0,
    products_deleted bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (publisher_id, version)
);

CREATE TABLE catalogue_changes (
    publisher_id text NOT NULL,
    product_id   text NOT NULL,
    version      bigint NOT NULL,
    -- json, not jsonb, as in products: key order is kept.
    body         json,
    PRIMARY KEY (publisher_id, product_id, version),
    FOREIGN KEY (publisher_id, version) REFERENCES catalogue_versions (publisher_id, version)
);
CREATE INDEX catalogue_changes_version ON catalogue_changes (publisher_id, version);

-- Catalogues that existed before history was kept start it here: their
-- current version, holding every current product.
INSERT INTO catalogue_versions (publisher_id, version, author, note, created_at, products_put)
SELECT p.id, p.catalogue_version, '', 'the catalogue as it was when history began', now(),
       (SELECT count(*) FROM products pr WHERE pr.publisher_id = p.id)
FROM publishers p WHERE p.catalogue_version > 0;
INSERT INTO catalogue_changes (publisher_id, product_id, version, body)
SELECT pr.publisher_id, pr.product_id, p.catalogue_version, pr.body
FROM products pr JOIN publishers p ON p.id = pr.publisher_id
WHERE p.catalogue_version > 0;

-- The request each decision answered, kept beside the chain so that a
-- backtest can replay it. The chain's hash covers the request's digest
-- (ledger_entries.request_digest), never these bytes: retention may drop a
-- row here and the chain still verifies, and a row that is here can be
-- checked against its entry's digest.
CREATE TABLE ledger_requests (
    publisher_id text NOT NULL,
    sequence     bigint NOT NULL,
    at           timestamptz NOT NULL,
    -- bytea: the request exactly as the buyer sent it, so that its digest
    -- still matches.
    body         bytea NOT NULL,
    PRIMARY KEY (publisher_id, sequence),
    FOREIGN KEY (publisher_id, sequence) REFERENCES ledger_entries (publisher_id, sequence) ON DELETE CASCADE
);
CREATE INDEX ledger_requests_at ON ledger_requests (publisher_id, at);

-- Decisions by time: the start of a backtest's window and the decisions
-- table's since filter. Times never go backwards along a chain.
CREATE INDEX ledger_entries_at ON ledger_entries (publisher_id, at);

-- Retention drops finished tasks by completion time.
CREATE INDEX tasks_completed ON tasks (publisher_id, completed_at) WHERE completed_at IS NOT NULL;

-- When a sandbox principal last seeded: retention empties catalogues not
-- seeded for a while (the row and its version stay, so versions keep
-- growing).
ALTER TABLE seeded_catalogues ADD COLUMN seeded_at timestamptz NOT NULL DEFAULT now();

-- +goose Down

ALTER TABLE seeded_catalogues DROP COLUMN seeded_at;
DROP INDEX tasks_completed;
DROP INDEX ledger_entries_at;
DROP TABLE ledger_requests;
DROP TABLE catalogue_changes;
DROP TABLE catalogue_versions;
