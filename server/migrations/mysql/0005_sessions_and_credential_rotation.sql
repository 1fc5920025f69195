CREATE TABLE `nodes` (
	`id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`description` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	`started_at` BIGINT NOT NULL,
	`last_seen_at` BIGINT NOT NULL,
	CONSTRAINT `nodes_id` PRIMARY KEY(`id`)
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`node_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`subscription_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`credential_id` CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`capacity` INT NOT NULL,
	`connected_at` BIGINT NOT NULL,
	`last_seen_at` BIGINT NOT NULL,
	CONSTRAINT `sessions_id` PRIMARY KEY(`id`)
);
--> statement-breakpoint
ALTER TABLE `credentials` ADD `previous_token_digest` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;--> statement-breakpoint
ALTER TABLE `credentials` ADD `previous_token_expires_at` BIGINT;--> statement-breakpoint
ALTER TABLE `idempotency_records` ADD `sequence` BIGINT UNSIGNED;--> statement-breakpoint
ALTER TABLE `credentials` ADD CONSTRAINT `previous_token_digest` UNIQUE(`previous_token_digest`);--> statement-breakpoint
CREATE INDEX `nodes_by_last_seen` ON `nodes` (`last_seen_at`);--> statement-breakpoint
CREATE INDEX `sessions_by_subscription` ON `sessions` (`subscription_id`);--> statement-breakpoint
CREATE INDEX `sessions_by_node` ON `sessions` (`node_id`);--> statement-breakpoint
CREATE INDEX `idempotency_by_age` ON `idempotency_records` (`created_at`);--> statement-breakpoint
CREATE INDEX `idempotency_by_sequence` ON `idempotency_records` (`sequence`);