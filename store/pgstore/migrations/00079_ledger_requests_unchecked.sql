-- A kept request is written in the same transaction as its ledger entry,
-- by the one writer of the chain, and entries are never deleted, so the
-- foreign key from ledger_requests to ledger_entries checked nothing the
-- writer does not already guarantee. It cost a great deal: PostgreSQL
-- plans a foreign-key check once per connection, and a plan made while
-- ledger_entries was small used the (publisher_id, at) index with only
-- publisher_id as its condition, so every kept request walked all of its
-- publisher's entries and appends slowed as the ledger grew (profiled:
-- 223 million index tuples read for 20,737 checks). Retention deletes
-- kept requests itself (retention.go); nothing relied on the cascade.

-- +goose Up

ALTER TABLE ledger_requests DROP CONSTRAINT ledger_requests_publisher_id_sequence_fkey;

-- +goose Down

ALTER TABLE ledger_requests
    ADD CONSTRAINT ledger_requests_publisher_id_sequence_fkey
        FOREIGN KEY (publisher_id, sequence) REFERENCES ledger_entries (publisher_id, sequence) ON DELETE CASCADE;
