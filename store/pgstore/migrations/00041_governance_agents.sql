-- Governance agent registrations (sync_governance): one agent per account,
-- replaced by each sync. The credentials are what the storefront presents
-- when it calls the agent, so they are kept as sent; no answer carries them.

-- +goose Up
CREATE TABLE governance_agents (
    publisher_id  text NOT NULL REFERENCES publishers (id),
    account_id    text NOT NULL,
    url           text NOT NULL,
    scheme        text NOT NULL,
    credentials   text NOT NULL,
    registered_by text NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (publisher_id, account_id)
);

-- +goose Down
DROP TABLE governance_agents;
