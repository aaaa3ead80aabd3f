#!/usr/bin/env node
import { createFilesPrivately } from '@portal/platform';
import { runAdminCommand } from './admin-command.js';

createFilesPrivately();

process.exitCode = await runAdminCommand(process.argv.slice(2));
