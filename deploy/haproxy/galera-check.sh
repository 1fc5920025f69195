#!/bin/sh
# HAProxy's external check for a Galera node (deploy/haproxy/galera-writer.cfg): succeeds only when
# the node is in the Primary component and Synced (wsrep_local_state 4), so a node that is joining,
# donating, or cut off from the majority is taken out of the writer rotation.
# HAProxy runs it as: galera-check.sh PROXY_ADDRESS PROXY_PORT SERVER_ADDRESS SERVER_PORT
# GALERA_CHECK_USER (default root) names a user that may read the global status; its password, if
# any, goes in GALERA_CHECK_PASSWORD.
status=$(MYSQL_PWD="${GALERA_CHECK_PASSWORD:-}" mariadb --connect-timeout=2 -h "$3" -P "$4" \
  -u "${GALERA_CHECK_USER:-root}" -N -B -e \
  "SELECT GROUP_CONCAT(VARIABLE_VALUE ORDER BY VARIABLE_NAME) FROM information_schema.GLOBAL_STATUS
   WHERE VARIABLE_NAME IN ('wsrep_cluster_status', 'wsrep_local_state')" 2>/dev/null)
[ "$status" = "Primary,4" ]
