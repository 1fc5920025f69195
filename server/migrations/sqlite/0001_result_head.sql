-- Custom SQL migration file, put your code below! --
-- The one row of result_head (see src/store/tables/define.ts): the log starts empty.
INSERT INTO `result_head` (`id`, `head_sequence`, `retention_boundary`) VALUES (1, 0, 0);
