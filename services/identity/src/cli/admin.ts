#!/usr/bin/env node
import { runAdminCommand } from './admin-command.js';

process.exitCode = await runAdminCommand(process.argv.slice(2));
