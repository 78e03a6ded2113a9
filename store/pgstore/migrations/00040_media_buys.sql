-- Media buys: account terms, buys and their history, the publisher's order
-- desk, and delivery rows. As in 00001 and 00002 every table is keyed by
-- publisher first. Buys and orders are kept as documents (json, not jsonb:
-- the buyer's context objects inside them are echoed byte for byte), with
-- the columns queries filter on beside them.

-- +goose Up

-- The task a ledger entry decided: '' for get_products, which every entry
-- before this migration recorded.
ALTER TABLE ledger_entries ADD COLUMN task text NOT NULL DEFAULT '';

CREATE TABLE account_terms (
    publisher_id  text NOT NULL REFERENCES publishers (id),
    account_id    text NOT NULL,
    billing       text NOT NULL,
    payment_terms text NOT NULL DEFAULT '',
    timezone      text NOT NULL,
    status        text NOT NULL,
    revision      bigint NOT NULL CHECK (revision >= 1),
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (publisher_id, account_id)
);

CREATE TABLE media_buys (
    publisher_id text NOT NULL REFERENCES publishers (id),
    id           text COLLATE "C" NOT NULL,
    account      text NOT NULL,
    principal    text NOT NULL,
    -- revision is the optimistic-concurrency token: an update names the
    -- revision it read and applies only if it is still current.
    revision     bigint NOT NULL CHECK (revision >= 1),
    body         json NOT NULL,
    -- position is creation order, for oldest-first listings.
    position     bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (publisher_id, id)
);
CREATE INDEX media_buys_account ON media_buys (publisher_id, account, position);
CREATE INDEX media_buys_principal ON media_buys (publisher_id, principal, position);

-- History is append-only.
CREATE TABLE media_buy_history (
    publisher_id text NOT NULL,
    media_buy_id text COLLATE "C" NOT NULL,
    position     bigint GENERATED ALWAYS AS IDENTITY,
    revision     bigint NOT NULL,
    at           timestamptz NOT NULL,
    actor        text NOT NULL DEFAULT '',
    action       text NOT NULL,
    summary      text NOT NULL DEFAULT '',
    package_id   text NOT NULL DEFAULT '',
    PRIMARY KEY (publisher_id, media_buy_id, position),
    FOREIGN KEY (publisher_id, media_buy_id) REFERENCES media_buys (publisher_id, id)
);

-- Orders waiting for the publisher. Deciding one is an UPDATE guarded by
-- status = 'pending': of two replicas deciding the same order one wins.
CREATE TABLE orders (
    publisher_id text NOT NULL REFERENCES publishers (id),
    task_id      text COLLATE "C" NOT NULL,
    status       text NOT NULL CHECK (status IN ('pending', 'approved', 'declined')),
    created_at   timestamptz NOT NULL,
    body         json NOT NULL,
    PRIMARY KEY (publisher_id, task_id)
);
CREATE INDEX orders_newest ON orders (publisher_id, status, created_at DESC, task_id);

-- One row per package, UTC day and source. Ad-server rows are replaced when
-- reported again; simulated rows accumulate.
CREATE TABLE delivery_rows (
    publisher_id text NOT NULL,
    media_buy_id text COLLATE "C" NOT NULL,
    package_id   text COLLATE "C" NOT NULL,
    day          date NOT NULL,
    source       text NOT NULL CHECK (source IN ('ad_server', 'simulated')),
    metrics      json NOT NULL,
    reported_at  timestamptz NOT NULL,
    PRIMARY KEY (publisher_id, media_buy_id, package_id, day, source),
    FOREIGN KEY (publisher_id, media_buy_id) REFERENCES media_buys (publisher_id, id)
);

-- +goose Down

DROP TABLE delivery_rows;
DROP TABLE orders;
DROP TABLE media_buy_history;
DROP TABLE media_buys;
DROP TABLE account_terms;
ALTER TABLE ledger_entries DROP COLUMN task;
