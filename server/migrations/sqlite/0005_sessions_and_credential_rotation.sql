CREATE TABLE `nodes` (
	`id` TEXT PRIMARY KEY NOT NULL,
	`description` TEXT NOT NULL,
	`started_at` INTEGER NOT NULL,
	`last_seen_at` INTEGER NOT NULL
);
--> statement-breakpoint
CREATE INDEX `nodes_by_last_seen` ON `nodes` (`last_seen_at`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` TEXT PRIMARY KEY NOT NULL,
	`node_id` TEXT NOT NULL,
	`subscription_id` TEXT NOT NULL,
	`credential_id` TEXT NOT NULL,
	`capacity` INTEGER NOT NULL,
	`connected_at` INTEGER NOT NULL,
	`last_seen_at` INTEGER NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sessions_by_subscription` ON `sessions` (`subscription_id`);--> statement-breakpoint
CREATE INDEX `sessions_by_node` ON `sessions` (`node_id`);--> statement-breakpoint
ALTER TABLE `credentials` ADD `previous_token_digest` TEXT;--> statement-breakpoint
ALTER TABLE `credentials` ADD `previous_token_expires_at` INTEGER;--> statement-breakpoint
CREATE UNIQUE INDEX `credentials_previous_token_digest_unique` ON `credentials` (`previous_token_digest`);--> statement-breakpoint
ALTER TABLE `idempotency_records` ADD `sequence` INTEGER;--> statement-breakpoint
CREATE INDEX `idempotency_by_age` ON `idempotency_records` (`created_at`);--> statement-breakpoint
CREATE INDEX `idempotency_by_sequence` ON `idempotency_records` (`sequence`);