// `npm run key -- NAME`: a new random key for the caller NAME, and the `sha256:` line routes.yaml holds instead of it.
import { createHash, randomBytes } from 'node:crypto';

/** Recognisable in a secret scanner or a leaked log: chat-routing-gateway key. */
const PREFIX = 'crg_';

const name = process.argv[2];
if (!name || !/^[a-z0-9][a-z0-9_-]*$/.test(name) || name.length > 64 || process.argv.length > 3) {
  process.stderr.write('usage: npm run key -- NAME   (NAME: the caller in routes.yaml, lower-case letters, digits, - and _)\n');
  process.exit(2);
}
// 32 random bytes: 256 bits, unguessable; base64url keeps the key one word with no character a header refuses.
const key = PREFIX + randomBytes(32).toString('base64url');
const digest = createHash('sha256').update(key).digest('hex');
process.stdout.write(
  [
    `Key for caller "${name}" (hand it over through your secret store; it is not shown again and routes.yaml never holds it):`,
    '',
    `  ${key}`,
    '',
    `Paste this line under callers.${name}.keys in routes.yaml:`,
    '',
    `      - sha256:${digest}`,
    '',
  ].join('\n'),
);
