/**
 * Run with Node (not vitest): imports the module named by argv[2] in a fresh process and prints, as JSON,
 * every file that loading it read — project files relative to the root and npm packages by name.
 * Counts modules, not milliseconds, so the answer does not depend on how busy the machine is.
 */
import { registerHooks } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '../..');
const urls: string[] = [];
registerHooks({
  load(url, context, nextLoad) {
    urls.push(url);
    return nextLoad(url, context);
  },
});
await import(pathToFileURL(path.resolve(root, process.argv[2] as string)).href);

const files: string[] = [];
const packages = new Set<string>();
for (const url of urls) {
  if (!url.startsWith('file:')) continue;
  const file = path.relative(root, fileURLToPath(url));
  const at = file.lastIndexOf('node_modules/');
  if (at < 0) {
    files.push(file);
    continue;
  }
  const parts = file.slice(at + 'node_modules/'.length).split('/');
  packages.add(parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string));
}
process.stdout.write(JSON.stringify({ files, packages: [...packages].sort() }));
