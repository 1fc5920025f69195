DROP INDEX `deliveries_list_state` ON `deliveries`;--> statement-breakpoint
DROP INDEX `deliveries_expiry` ON `deliveries`;--> statement-breakpoint
DROP INDEX `deliveries_by_sequence` ON `deliveries`;--> statement-breakpoint
DROP INDEX `deliveries_by_state` ON `deliveries`;--> statement-breakpoint
ALTER TABLE `sessions` ADD `held` INT DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `pending_count` INT DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `waiting_count` INT DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `lease_check_at` BIGINT;--> statement-breakpoint
CREATE INDEX `deliveries_work` ON `deliveries` (`subscription_id`,`state`,`lease_until`,`sequence`);--> statement-breakpoint
CREATE INDEX `subscriptions_by_lease_check` ON `subscriptions` (`lease_check_at`);