export { startAllInOne, type RunningPortal } from './all-in-one.js';
