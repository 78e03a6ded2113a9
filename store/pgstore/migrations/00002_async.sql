-- Idempotency records, asynchronous tasks and sandbox seeded catalogues.
-- Like everything in 00001, every table is keyed by publisher first, and the
-- owner of a row (a scope, an account and principal, a principal) is part of
-- its primary key: a query that does not name the owner cannot reach it.

-- +goose Up

-- One idempotency record per (publisher, scope, key): a reservation while
-- the first request is in flight (done = false), then the response. The
-- primary key is what makes a reservation exclusive across replicas: of
-- several INSERTs of one key exactly one creates the row.
CREATE TABLE replays (
    publisher_id    text NOT NULL REFERENCES publishers (id),
    scope           text NOT NULL,
    idempotency_key text NOT NULL,
    request_hash    text NOT NULL,
    done            boolean NOT NULL DEFAULT false,
    -- bytea, not json: a replay must be byte-identical to the original
    -- response, and the store never looks inside it.
    payload         bytea,
    failed          boolean NOT NULL DEFAULT false,
    slug            text NOT NULL DEFAULT '',
    -- created_at is the database's clock, never a replica's: staleness is
    -- judged against it, and replicas' clocks may disagree.
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (publisher_id, scope, idempotency_key),
    CONSTRAINT replays_reservation_empty CHECK (done OR (payload IS NULL AND NOT failed AND slug = ''))
);
CREATE INDEX replays_created ON replays (publisher_id, created_at);

-- Tasks belong to (account, principal): the same task id under another
-- owner is another task.
CREATE TABLE tasks (
    publisher_id text NOT NULL REFERENCES publishers (id),
    account      text NOT NULL,
    principal    text NOT NULL,
    -- COLLATE "C": ids break ties in listing order byte by byte, as Go
    -- compares strings, whatever the database's locale.
    id           text COLLATE "C" NOT NULL,
    type         text NOT NULL,
    status       text NOT NULL,
    message      text NOT NULL DEFAULT '',
    -- The request and the result are AdCP documents kept byte for byte.
    request      bytea,
    result       bytea,
    -- webhook is the store.Webhook document; NULL when there is none.
    webhook      jsonb,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    completed_at timestamptz,
    -- The webhook delivery state (store.Delivery).
    delivery_idempotency_key text NOT NULL DEFAULT '',
    delivery_timestamp       timestamptz,
    delivery_attempts        bigint NOT NULL DEFAULT 0,
    delivery_last_error      text NOT NULL DEFAULT '',
    delivered_at             timestamptz,
    PRIMARY KEY (publisher_id, account, principal, id)
);
-- ListTasks: an owner's tasks, newest first.
CREATE INDEX tasks_newest ON tasks (publisher_id, account, principal, created_at DESC, id);

-- A sandbox principal's seeded catalogue. Seeds lock this row, so that a
-- session reset and the product writes of one seed happen as one.
CREATE TABLE seeded_catalogues (
    publisher_id text NOT NULL REFERENCES publishers (id),
    principal    text NOT NULL,
    -- session is the compliance run the products belong to; a seed from
    -- another session empties the catalogue first.
    session      text NOT NULL,
    -- version counts seeds; it only ever grows, across sessions too.
    version      bigint NOT NULL DEFAULT 0 CHECK (version >= 0),
    PRIMARY KEY (publisher_id, principal)
);

CREATE TABLE seeded_products (
    publisher_id text NOT NULL,
    principal    text NOT NULL,
    product_id   text NOT NULL,
    -- position is insertion order, kept on replace, as in products.
    position     bigint GENERATED ALWAYS AS IDENTITY,
    -- json, not jsonb, as in products: key order is kept.
    body         json NOT NULL,
    PRIMARY KEY (publisher_id, principal, product_id),
    FOREIGN KEY (publisher_id, principal) REFERENCES seeded_catalogues (publisher_id, principal) ON DELETE CASCADE
);
CREATE INDEX seeded_products_order ON seeded_products (publisher_id, principal, position);

-- +goose Down

DROP TABLE seeded_products;
DROP TABLE seeded_catalogues;
DROP TABLE tasks;
DROP TABLE replays;
