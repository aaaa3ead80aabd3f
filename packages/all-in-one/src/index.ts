export { startAllInOne, type AllInOneOptions, type RunningPortal } from './all-in-one.js';
