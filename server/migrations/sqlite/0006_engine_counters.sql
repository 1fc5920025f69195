DROP INDEX `deliveries_list_state`;--> statement-breakpoint
DROP INDEX `deliveries_expiry`;--> statement-breakpoint
DROP INDEX `deliveries_by_sequence`;--> statement-breakpoint
DROP INDEX `deliveries_by_state`;--> statement-breakpoint
CREATE INDEX `deliveries_work` ON `deliveries` (`subscription_id`,`state`,`lease_until`,`sequence`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `held` INTEGER DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `pending_count` INTEGER DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `waiting_count` INTEGER DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `lease_check_at` INTEGER;--> statement-breakpoint
CREATE INDEX `subscriptions_by_lease_check` ON `subscriptions` (`lease_check_at`);