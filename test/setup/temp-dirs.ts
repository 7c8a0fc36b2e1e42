import { afterAll } from 'vitest';
import { removeTempDirs } from '../support/temp.js';

// Registered before a file's own hooks, so it runs after them: the file has stopped what used
// its folders by then.
afterAll(() => removeTempDirs());
