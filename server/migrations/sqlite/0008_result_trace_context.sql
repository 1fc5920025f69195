ALTER TABLE `results` ADD `traceparent` TEXT;--> statement-breakpoint
ALTER TABLE `results` ADD `tracestate` TEXT;