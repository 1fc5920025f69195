CREATE TABLE `applications` (
	`id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`namespace_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`name` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`created_at` BIGINT NOT NULL,
	CONSTRAINT `applications_id` PRIMARY KEY(`id`),
	CONSTRAINT `namespace_id` UNIQUE(`namespace_id`,`name`)
);
--> statement-breakpoint
CREATE TABLE `audit_log` (
	`id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`subscription_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`delivery_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin,
	`credential_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`action` VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`reason` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`revision` VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`detail` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`created_at` BIGINT NOT NULL,
	CONSTRAINT `audit_log_id` PRIMARY KEY(`id`)
);
--> statement-breakpoint
CREATE TABLE `credential_queues` (
	`credential_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`queue_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	CONSTRAINT `credential_queues_credential_id_queue_id_pk` PRIMARY KEY(`credential_id`,`queue_id`)
);
--> statement-breakpoint
CREATE TABLE `credentials` (
	`id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`namespace_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`application_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`token_digest` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`permissions` VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`created_at` BIGINT NOT NULL,
	`revoked_at` BIGINT,
	CONSTRAINT `credentials_id` PRIMARY KEY(`id`),
	CONSTRAINT `token_digest` UNIQUE(`token_digest`)
);
--> statement-breakpoint
CREATE TABLE `deliveries` (
	`id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`subscription_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`sequence` BIGINT UNSIGNED NOT NULL,
	`event_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`revision` BIGINT UNSIGNED NOT NULL,
	`state` VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`created_at` BIGINT NOT NULL,
	`available_at` BIGINT NOT NULL,
	`lease_epoch` BIGINT UNSIGNED NOT NULL,
	`lease_until` BIGINT,
	`lease_digest` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`lease_session` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin,
	`attempts` INT NOT NULL,
	`attempt_budget` INT NOT NULL,
	`acknowledged_at` BIGINT,
	CONSTRAINT `deliveries_id` PRIMARY KEY(`id`),
	CONSTRAINT `subscription_id` UNIQUE(`subscription_id`,`sequence`)
);
--> statement-breakpoint
CREATE TABLE `idempotency_records` (
	`credential_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`scope` VARCHAR(96) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`idem_key` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`request_digest` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`status` INT NOT NULL,
	`response` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`created_at` BIGINT NOT NULL,
	CONSTRAINT `idempotency_records_credential_id_scope_idem_key_pk` PRIMARY KEY(`credential_id`,`scope`,`idem_key`)
);
--> statement-breakpoint
CREATE TABLE `namespaces` (
	`id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`name` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`created_at` BIGINT NOT NULL,
	CONSTRAINT `namespaces_id` PRIMARY KEY(`id`),
	CONSTRAINT `name` UNIQUE(`name`)
);
--> statement-breakpoint
CREATE TABLE `orbit_meta` (
	`name` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`value` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	CONSTRAINT `orbit_meta_name` PRIMARY KEY(`name`)
);
--> statement-breakpoint
CREATE TABLE `queues` (
	`id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`namespace_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`name` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`created_at` BIGINT NOT NULL,
	CONSTRAINT `queues_id` PRIMARY KEY(`id`),
	CONSTRAINT `namespace_id` UNIQUE(`namespace_id`,`name`)
);
--> statement-breakpoint
CREATE TABLE `result_head` (
	`id` INT NOT NULL,
	`head_sequence` BIGINT UNSIGNED NOT NULL,
	`retention_boundary` BIGINT UNSIGNED NOT NULL,
	CONSTRAINT `result_head_id` PRIMARY KEY(`id`)
);
--> statement-breakpoint
CREATE TABLE `results` (
	`sequence` BIGINT UNSIGNED NOT NULL,
	`id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`queue_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`type` VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`task_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`task_revision` VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`occurred_at` BIGINT NOT NULL,
	`details` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`result` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`effect_uncertain` TINYINT NOT NULL,
	`current_attempt_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin,
	CONSTRAINT `results_sequence` PRIMARY KEY(`sequence`),
	CONSTRAINT `id` UNIQUE(`id`)
);
--> statement-breakpoint
CREATE TABLE `subscriptions` (
	`id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`namespace_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`application_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`credential_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`queue_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`name` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`active_name` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`revision` BIGINT UNSIGNED NOT NULL,
	`enabled` TINYINT NOT NULL,
	`types` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`cursor_sequence` BIGINT UNSIGNED NOT NULL,
	`max_pending` INT NOT NULL,
	`max_attempts` INT NOT NULL,
	`created_at` BIGINT NOT NULL,
	`updated_at` BIGINT NOT NULL,
	`retired_at` BIGINT,
	`retired_sequence` BIGINT UNSIGNED,
	CONSTRAINT `subscriptions_id` PRIMARY KEY(`id`),
	CONSTRAINT `namespace_id` UNIQUE(`namespace_id`,`active_name`)
);
--> statement-breakpoint
CREATE INDEX `audit_by_subscription` ON `audit_log` (`subscription_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `deliveries_claim` ON `deliveries` (`subscription_id`,`state`,`available_at`,`sequence`);--> statement-breakpoint
CREATE INDEX `deliveries_list` ON `deliveries` (`subscription_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `deliveries_list_state` ON `deliveries` (`subscription_id`,`state`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `results_by_queue` ON `results` (`queue_id`,`sequence`);--> statement-breakpoint
CREATE INDEX `subscriptions_by_owner` ON `subscriptions` (`queue_id`,`credential_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `subscriptions_by_namespace` ON `subscriptions` (`namespace_id`,`retired_at`);