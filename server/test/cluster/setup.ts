/**
 * Global setup of `npm run test:cluster`: what its tests run besides Node and MariaDB, installed
 * from Debian's archive when missing (as root; otherwise it stops with the command to run): haproxy
 * for the balancer, socat for the partition test's forwarder to MariaDB, iproute2 for the network
 * namespaces, and the Galera provider and rsync for the partitioned cluster.
 */
// The modules themselves, not @orbit/testing's index: a global setup runs outside vitest's module
// graph, where the workspaces' source condition does not apply to the server the index pulls in.
import { ensureDebianPackage, ensureGaleraPackages } from '../../../testing/src/debian.ts';
import { HAPROXY } from '../../../testing/src/haproxy.ts';
import { netnsMissing } from '../../../testing/src/netns.ts';

export default function setup(): void {
  ensureDebianPackage(HAPROXY, 'haproxy', 'the balancer and the writer proxy run deploy/haproxy/*.cfg');
  ensureDebianPackage('/usr/bin/socat', 'socat', 'the partition test forwards a network namespace to MariaDB with it');
  ensureDebianPackage('/usr/sbin/ip', 'iproute2', 'the partition tests make network namespaces and veth pairs');
  ensureGaleraPackages();
  const missing = netnsMissing();
  if (missing) throw new Error(missing);
}
