-- Revision a082b8bb98d0 on MySQL and MariaDB: the indexes that
-- duplicated a unique constraint's are dropped.

DROP INDEX inventories_resource_provider_id_idx ON inventories;

DROP INDEX inventories_resource_provider_resource_class_idx ON inventories;

DROP INDEX ix_placement_aggregates_uuid ON placement_aggregates;

DROP INDEX resource_providers_name_idx ON resource_providers;

DROP INDEX resource_providers_uuid_idx ON resource_providers;
