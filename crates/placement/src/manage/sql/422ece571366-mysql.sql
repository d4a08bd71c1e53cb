-- Revision 422ece571366 on MySQL and MariaDB: the consumer_types table,
-- and consumers.consumer_type_id with its foreign key and index.

CREATE TABLE consumer_types (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    name VARCHAR(255) NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uniq_consumer_types0name (name)
);

ALTER TABLE consumers ADD COLUMN consumer_type_id INTEGER DEFAULT NULL;

ALTER TABLE consumers ADD CONSTRAINT consumers_consumer_type_id_fkey FOREIGN KEY (consumer_type_id) REFERENCES consumer_types (id);

CREATE INDEX consumers_consumer_type_id_idx ON consumers (consumer_type_id);
