/**
 * @module
 * Shell commands of the configuration (publisher, retention, bootstrap, server): `{name}`
 * placeholders are substituted, the command runs under `sh -c` in the configuration's directory,
 * and its output is collected with a time limit.
 */
import { spawn } from 'node:child_process';

/** Replaces `{name}` by `vars[name]`; unknown placeholders are left as they are. */
export function substitute(template: string, vars: Readonly<Record<string, string>>): string {
  return template.replace(/\{([a-z_]+)\}/g, (whole, name: string) => (Object.hasOwn(vars, name) ? vars[name]! : whole));
}

export interface CommandResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/** Runs `command` with `stdin`; rejects when it does not finish within `timeoutMs`. */
export function runCommand(
  command: string,
  options: { cwd: string; env?: Record<string, string>; stdin?: string; timeoutMs?: number },
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], {
      cwd: options.cwd,
      env: { ...process.env, ...(options.env ?? {}) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timeoutMs = options.timeoutMs ?? 30_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new CommandError(`command did not finish within ${timeoutMs} ms: ${command}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new CommandError(`cannot run ${command}: ${error.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin ?? '');
  });
}
