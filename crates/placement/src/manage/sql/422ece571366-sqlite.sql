-- Revision 422ece571366 on SQLite: the consumer_types table, and
-- consumers.consumer_type_id with its foreign key and index. SQLite adds
-- a constrained column by rebuilding the table (as alembic's batch mode
-- does there), so consumers is copied into its new form.

CREATE TABLE consumer_types (
    created_at DATETIME,
    updated_at DATETIME,
    id INTEGER NOT NULL,
    name VARCHAR(255) NOT NULL,
    PRIMARY KEY (id),
    CONSTRAINT uniq_consumer_types0name UNIQUE (name)
);

CREATE TABLE _alembic_tmp_consumers (
    created_at DATETIME,
    updated_at DATETIME,
    id INTEGER NOT NULL,
    uuid VARCHAR(36) NOT NULL,
    project_id INTEGER NOT NULL,
    user_id INTEGER NOT NULL,
    generation INTEGER DEFAULT 0 NOT NULL,
    consumer_type_id INTEGER,
    PRIMARY KEY (id),
    CONSTRAINT uniq_consumers0uuid UNIQUE (uuid),
    CONSTRAINT consumers_consumer_type_id_fkey FOREIGN KEY(consumer_type_id) REFERENCES consumer_types (id)
);

INSERT INTO _alembic_tmp_consumers (created_at, updated_at, id, uuid, project_id, user_id, generation)
SELECT created_at, updated_at, id, uuid, project_id, user_id, generation FROM consumers;

DROP TABLE consumers;

ALTER TABLE _alembic_tmp_consumers RENAME TO consumers;

CREATE INDEX consumers_project_id_uuid_idx ON consumers (project_id, uuid);

CREATE INDEX consumers_project_id_user_id_uuid_idx ON consumers (project_id, user_id, uuid);

CREATE INDEX consumers_consumer_type_id_idx ON consumers (consumer_type_id);
