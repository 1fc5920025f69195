CREATE TABLE `applications` (
	`id` TEXT PRIMARY KEY NOT NULL,
	`namespace_id` TEXT NOT NULL,
	`name` TEXT NOT NULL,
	`created_at` INTEGER NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `applications_namespace_id_name_unique` ON `applications` (`namespace_id`,`name`);--> statement-breakpoint
CREATE TABLE `audit_log` (
	`id` TEXT PRIMARY KEY NOT NULL,
	`subscription_id` TEXT NOT NULL,
	`delivery_id` TEXT,
	`credential_id` TEXT NOT NULL,
	`action` TEXT NOT NULL,
	`reason` TEXT NOT NULL,
	`revision` TEXT NOT NULL,
	`detail` TEXT NOT NULL,
	`created_at` INTEGER NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_by_subscription` ON `audit_log` (`subscription_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `credential_queues` (
	`credential_id` TEXT NOT NULL,
	`queue_id` TEXT NOT NULL,
	PRIMARY KEY(`credential_id`, `queue_id`)
);
--> statement-breakpoint
CREATE TABLE `credentials` (
	`id` TEXT PRIMARY KEY NOT NULL,
	`namespace_id` TEXT NOT NULL,
	`application_id` TEXT NOT NULL,
	`token_digest` TEXT NOT NULL,
	`permissions` TEXT NOT NULL,
	`created_at` INTEGER NOT NULL,
	`revoked_at` INTEGER
);
--> statement-breakpoint
CREATE UNIQUE INDEX `credentials_token_digest_unique` ON `credentials` (`token_digest`);--> statement-breakpoint
CREATE TABLE `deliveries` (
	`id` TEXT PRIMARY KEY NOT NULL,
	`subscription_id` TEXT NOT NULL,
	`sequence` INTEGER NOT NULL,
	`event_id` TEXT NOT NULL,
	`revision` INTEGER NOT NULL,
	`state` TEXT NOT NULL,
	`created_at` INTEGER NOT NULL,
	`available_at` INTEGER NOT NULL,
	`lease_epoch` INTEGER NOT NULL,
	`lease_until` INTEGER,
	`lease_digest` TEXT,
	`lease_session` TEXT,
	`attempts` INTEGER NOT NULL,
	`attempt_budget` INTEGER NOT NULL,
	`acknowledged_at` INTEGER
);
--> statement-breakpoint
CREATE INDEX `deliveries_claim` ON `deliveries` (`subscription_id`,`state`,`available_at`,`sequence`);--> statement-breakpoint
CREATE INDEX `deliveries_list` ON `deliveries` (`subscription_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `deliveries_list_state` ON `deliveries` (`subscription_id`,`state`,`created_at`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `deliveries_subscription_id_sequence_unique` ON `deliveries` (`subscription_id`,`sequence`);--> statement-breakpoint
CREATE TABLE `idempotency_records` (
	`credential_id` TEXT NOT NULL,
	`scope` TEXT NOT NULL,
	`idem_key` TEXT NOT NULL,
	`request_digest` TEXT NOT NULL,
	`status` INTEGER NOT NULL,
	`response` TEXT NOT NULL,
	`created_at` INTEGER NOT NULL,
	PRIMARY KEY(`credential_id`, `scope`, `idem_key`)
);
--> statement-breakpoint
CREATE TABLE `namespaces` (
	`id` TEXT PRIMARY KEY NOT NULL,
	`name` TEXT NOT NULL,
	`created_at` INTEGER NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `namespaces_name_unique` ON `namespaces` (`name`);--> statement-breakpoint
CREATE TABLE `orbit_meta` (
	`name` TEXT PRIMARY KEY NOT NULL,
	`value` TEXT NOT NULL
);
--> statement-breakpoint
CREATE TABLE `queues` (
	`id` TEXT PRIMARY KEY NOT NULL,
	`namespace_id` TEXT NOT NULL,
	`name` TEXT NOT NULL,
	`created_at` INTEGER NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `queues_namespace_id_name_unique` ON `queues` (`namespace_id`,`name`);--> statement-breakpoint
CREATE TABLE `result_head` (
	`id` INTEGER PRIMARY KEY NOT NULL,
	`head_sequence` INTEGER NOT NULL,
	`retention_boundary` INTEGER NOT NULL
);
--> statement-breakpoint
CREATE TABLE `results` (
	`sequence` INTEGER PRIMARY KEY NOT NULL,
	`id` TEXT NOT NULL,
	`queue_id` TEXT NOT NULL,
	`type` TEXT NOT NULL,
	`task_id` TEXT NOT NULL,
	`task_revision` TEXT NOT NULL,
	`occurred_at` INTEGER NOT NULL,
	`details` TEXT NOT NULL,
	`result` TEXT,
	`effect_uncertain` INTEGER NOT NULL,
	`current_attempt_id` TEXT
);
--> statement-breakpoint
CREATE INDEX `results_by_queue` ON `results` (`queue_id`,`sequence`);--> statement-breakpoint
CREATE UNIQUE INDEX `results_id_unique` ON `results` (`id`);--> statement-breakpoint
CREATE TABLE `subscriptions` (
	`id` TEXT PRIMARY KEY NOT NULL,
	`namespace_id` TEXT NOT NULL,
	`application_id` TEXT NOT NULL,
	`credential_id` TEXT NOT NULL,
	`queue_id` TEXT NOT NULL,
	`name` TEXT NOT NULL,
	`active_name` TEXT,
	`revision` INTEGER NOT NULL,
	`enabled` INTEGER NOT NULL,
	`types` TEXT NOT NULL,
	`cursor_sequence` INTEGER NOT NULL,
	`max_pending` INTEGER NOT NULL,
	`max_attempts` INTEGER NOT NULL,
	`created_at` INTEGER NOT NULL,
	`updated_at` INTEGER NOT NULL,
	`retired_at` INTEGER,
	`retired_sequence` INTEGER
);
--> statement-breakpoint
CREATE INDEX `subscriptions_by_owner` ON `subscriptions` (`queue_id`,`credential_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `subscriptions_by_namespace` ON `subscriptions` (`namespace_id`,`retired_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `subscriptions_namespace_id_active_name_unique` ON `subscriptions` (`namespace_id`,`active_name`);