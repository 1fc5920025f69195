/** drizzle-kit for the sqlite tables: `npm run db:generate` writes migrations/sqlite/ (see spec/README.md, Storage). */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({ dialect: 'sqlite', schema: './src/store/tables/sqlite.ts', out: './migrations/sqlite' });
