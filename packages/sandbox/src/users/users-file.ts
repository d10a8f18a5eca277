import { readFile } from 'node:fs/promises';
import { SandboxConfigError } from '../errors.js';
import type { UserSeed } from './user.js';

/**
 * Reads a users fixture file: JSON, either an array of user seeds or `{ "users": [...] }`.
 * Each seed is any subset of the User fields (see {@link UserSeed}).
 */
export async function readUsersFile(path: string): Promise<UserSeed[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new SandboxConfigError('invalid_users_file', `Cannot read the users file ${path}: ${(error as Error).message}.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new SandboxConfigError('invalid_users_file', `The users file ${path} is not JSON (${(error as Error).message}); it must hold an array of users or {"users": [...]}.`);
  }
  const users = Array.isArray(parsed) ? parsed : (parsed as { users?: unknown } | null)?.users;
  if (!Array.isArray(users)) {
    throw new SandboxConfigError('invalid_users_file', `The users file ${path} must hold an array of users or {"users": [...]}.`);
  }
  return users as UserSeed[];
}
