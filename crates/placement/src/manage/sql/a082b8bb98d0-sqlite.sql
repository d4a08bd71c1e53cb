-- Revision a082b8bb98d0 (SQLite and PostgreSQL): the indexes that
-- duplicated a unique constraint's are dropped.

DROP INDEX inventories_resource_provider_id_idx;

DROP INDEX inventories_resource_provider_resource_class_idx;

DROP INDEX ix_placement_aggregates_uuid;

DROP INDEX resource_providers_name_idx;

DROP INDEX resource_providers_uuid_idx;
