// The web benchmark's baseline: React and React DOM rendering one heading and a paragraph, built
// by the same Vite as the app. What any React page costs before it does anything.
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';

createRoot(document.getElementById('root')).render(
  createElement('main', null, createElement('h1', null, 'Baseline'), createElement('p', null, 'A minimal React page.')),
);
