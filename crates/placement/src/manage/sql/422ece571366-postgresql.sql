-- Revision 422ece571366 on PostgreSQL: the consumer_types table, and
-- consumers.consumer_type_id with its foreign key and index.

CREATE TABLE consumer_types (
    created_at TIMESTAMP WITHOUT TIME ZONE,
    updated_at TIMESTAMP WITHOUT TIME ZONE,
    id SERIAL NOT NULL,
    name VARCHAR(255) NOT NULL,
    PRIMARY KEY (id),
    CONSTRAINT uniq_consumer_types0name UNIQUE (name)
);

ALTER TABLE consumers ADD COLUMN consumer_type_id INTEGER;

ALTER TABLE consumers ADD CONSTRAINT consumers_consumer_type_id_fkey FOREIGN KEY(consumer_type_id) REFERENCES consumer_types (id);

CREATE INDEX consumers_consumer_type_id_idx ON consumers (consumer_type_id);
