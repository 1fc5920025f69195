// The repository's development loop: run the workspaces' TypeScript sources without a build.
// tsx compiles them on load, and the `@orbit/source` export condition makes `@orbit/*` imports
// resolve to the sources instead of `dist/` (see the packages' `exports`). The bin launchers call
// this only inside the repository; an installed package runs its `dist/` and needs neither.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

export const SOURCE_CONDITION = '@orbit/source';

const ADD_CONDITION = `export async function resolve(specifier, context, next) {
  const conditions = context.conditions.includes(${JSON.stringify(SOURCE_CONDITION)}) ? context.conditions : [${JSON.stringify(SOURCE_CONDITION)}, ...context.conditions];
  return next(specifier, { ...context, conditions });
}`;

export function registerSources() {
  registerTsx();
  // Registered last, so it runs first and tsx resolves with the condition.
  register(`data:text/javascript,${encodeURIComponent(ADD_CONDITION)}`);
}
