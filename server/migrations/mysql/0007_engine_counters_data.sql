-- Custom SQL migration file, put your code below! --
-- The engine's counters (src/store/tables/define.ts), counted once from the rows they summarize;
-- from here on the engine keeps them in the transactions that change them.
UPDATE `subscriptions` SET
  `pending_count` = (SELECT COUNT(*) FROM `deliveries` d WHERE d.`subscription_id` = `subscriptions`.`id` AND d.`state` IN ('PENDING', 'LEASED', 'EXPIRED')),
  `waiting_count` = (SELECT COUNT(*) FROM `deliveries` d WHERE d.`subscription_id` = `subscriptions`.`id` AND d.`state` = 'PENDING'),
  `lease_check_at` = (SELECT MIN(d.`lease_until`) FROM `deliveries` d WHERE d.`subscription_id` = `subscriptions`.`id` AND d.`state` = 'LEASED');--> statement-breakpoint
UPDATE `sessions` SET `held` = (SELECT COUNT(*) FROM `deliveries` d WHERE d.`subscription_id` = `sessions`.`subscription_id` AND d.`state` = 'LEASED' AND d.`lease_session` = `sessions`.`id`);
