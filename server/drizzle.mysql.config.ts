/** drizzle-kit for the mysql tables: `npm run db:generate` writes migrations/mysql/ (see spec/README.md, Storage). */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({ dialect: 'mysql', schema: './src/store/tables/mysql.ts', out: './migrations/mysql' });
