CREATE INDEX `deliveries_expiry` ON `deliveries` (`state`,`lease_until`);--> statement-breakpoint
CREATE INDEX `deliveries_by_sequence` ON `deliveries` (`sequence`,`state`);