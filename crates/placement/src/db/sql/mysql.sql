-- Placement schema on MySQL and MariaDB, as upstream's migrations leave it
-- at revision a082b8bb98d0: the same tables, columns, types (FLOAT is
-- single precision here, DATETIME has no fractional seconds), defaults,
-- AUTO_INCREMENT ids, keys and foreign keys (the unnamed ones become
-- <table>_ibfk_N in declaration order). No engine, character set or
-- collation is given: as upstream's, the tables take the database's.
-- Statements are separated by blank lines.

CREATE TABLE alembic_version (
    version_num VARCHAR(32) NOT NULL,
    PRIMARY KEY (version_num)
);

CREATE TABLE allocations (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    resource_provider_id INTEGER NOT NULL,
    consumer_id VARCHAR(36) NOT NULL,
    resource_class_id INTEGER NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (id),
    KEY allocations_resource_provider_class_used_idx (resource_provider_id, resource_class_id, used),
    KEY allocations_resource_class_id_idx (resource_class_id),
    KEY allocations_consumer_id_idx (consumer_id)
);

CREATE TABLE inventories (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    resource_provider_id INTEGER NOT NULL,
    resource_class_id INTEGER NOT NULL,
    total INTEGER NOT NULL,
    reserved INTEGER NOT NULL,
    min_unit INTEGER NOT NULL,
    max_unit INTEGER NOT NULL,
    step_size INTEGER NOT NULL,
    allocation_ratio FLOAT NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uniq_inventories0resource_provider_resource_class (resource_provider_id, resource_class_id),
    KEY inventories_resource_class_id_idx (resource_class_id)
);

CREATE TABLE placement_aggregates (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    uuid VARCHAR(36) DEFAULT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uniq_placement_aggregates0uuid (uuid)
);

CREATE TABLE projects (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    external_id VARCHAR(255) NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uniq_projects0external_id (external_id)
);

CREATE TABLE resource_classes (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    name VARCHAR(255) NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uniq_resource_classes0name (name)
);

CREATE TABLE resource_provider_aggregates (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    resource_provider_id INTEGER NOT NULL,
    aggregate_id INTEGER NOT NULL,
    PRIMARY KEY (resource_provider_id, aggregate_id),
    KEY resource_provider_aggregates_aggregate_id_idx (aggregate_id)
);

CREATE TABLE resource_providers (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    uuid VARCHAR(36) NOT NULL,
    name VARCHAR(200) DEFAULT NULL,
    generation INTEGER DEFAULT NULL,
    root_provider_id INTEGER DEFAULT NULL,
    parent_provider_id INTEGER DEFAULT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uniq_resource_providers0uuid (uuid),
    UNIQUE KEY uniq_resource_providers0name (name),
    KEY resource_providers_parent_provider_id_idx (parent_provider_id),
    KEY resource_providers_root_provider_id_idx (root_provider_id),
    FOREIGN KEY (parent_provider_id) REFERENCES resource_providers (id),
    FOREIGN KEY (root_provider_id) REFERENCES resource_providers (id)
);

CREATE TABLE traits (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    name VARCHAR(255) NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uniq_traits0name (name)
);

CREATE TABLE users (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    external_id VARCHAR(255) NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uniq_users0external_id (external_id)
);

CREATE TABLE resource_provider_traits (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    trait_id INTEGER NOT NULL,
    resource_provider_id INTEGER NOT NULL,
    PRIMARY KEY (trait_id, resource_provider_id),
    KEY resource_provider_traits_resource_provider_trait_idx (resource_provider_id, trait_id),
    FOREIGN KEY (resource_provider_id) REFERENCES resource_providers (id),
    FOREIGN KEY (trait_id) REFERENCES traits (id)
);

CREATE TABLE consumer_types (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    name VARCHAR(255) NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uniq_consumer_types0name (name)
);

CREATE TABLE consumers (
    created_at DATETIME DEFAULT NULL,
    updated_at DATETIME DEFAULT NULL,
    id INTEGER NOT NULL AUTO_INCREMENT,
    uuid VARCHAR(36) NOT NULL,
    project_id INTEGER NOT NULL,
    user_id INTEGER NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0,
    consumer_type_id INTEGER DEFAULT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uniq_consumers0uuid (uuid),
    KEY consumers_project_id_user_id_uuid_idx (project_id, user_id, uuid),
    KEY consumers_project_id_uuid_idx (project_id, uuid),
    KEY consumers_consumer_type_id_idx (consumer_type_id),
    CONSTRAINT consumers_consumer_type_id_fkey FOREIGN KEY (consumer_type_id) REFERENCES consumer_types (id)
);

INSERT INTO alembic_version (version_num) VALUES ('a082b8bb98d0');
