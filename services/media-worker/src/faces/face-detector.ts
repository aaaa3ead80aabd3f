import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';

/** A face the detector found: a box in fractions of the picture, and its confidence. */
export interface DetectedFace {
  x: number;
  y: number;
  w: number;
  h: number;
  score: number;
}

/** Finds faces in an RGB picture (3 bytes a pixel, rows top to bottom). */
export interface FaceDetector {
  detect(rgb: Uint8Array, width: number, height: number): Promise<DetectedFace[]>;
  /** Stops the detector's thread (a later call starts it again). */
  close(): Promise<void>;
}

/**
 * The detector: SSD MobileNet v1 of @vladmandic/face-api on TensorFlow.js's WASM backend
 * (docs/decisions/0044-faces-blurred-before-the-public-sees-them.md). Its weights and the WASM binaries
 * are files of the installed packages, read from disk: nothing is fetched.
 */
export const FACE_MODEL = 'ssd_mobilenetv1';

const require = createRequire(import.meta.url);

/** Where the packages' files are, resolved here so the thread needs no module resolution of its own. */
export function faceModelFiles(): { faceApi: string; modelDir: string; wasmDir: string } {
  const faceApi = require.resolve('@vladmandic/face-api/dist/face-api.node-wasm.js');
  return {
    faceApi,
    modelDir: join(dirname(require.resolve('@vladmandic/face-api/package.json')), 'model'),
    // A directory with its trailing slash: the backend appends the binary's name to it.
    wasmDir: `${join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist')}/`,
  };
}

/**
 * The thread's code, inline (eval) so that it runs the same from TypeScript sources and builds.
 * The model runs on this thread and not on the event loop's: one detection holds a core for a few
 * hundred milliseconds, which in the all-in-one process would hold every request as long.
 * `setWasmPaths(dir, false)`: the WASM binary is read from the file, not with fetch (Node's fetch
 * takes no file paths).
 */
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { faceApi, modelDir, wasmDir, model } = workerData;
let ready;
function load() {
  ready ??= (async () => {
    const faceapi = require(faceApi);
    faceapi.tf.setWasmPaths(wasmDir, false);
    await faceapi.tf.setBackend('wasm');
    await faceapi.tf.ready();
    await faceapi.nets.ssdMobilenetv1.loadFromDisk(modelDir);
    return faceapi;
  })();
  return ready;
}
parentPort.on('message', async ({ id, rgb, width, height, minConfidence }) => {
  try {
    const faceapi = await load();
    const tensor = faceapi.tf.tensor3d(new Uint8Array(rgb), [height, width, 3], 'int32');
    try {
      const found = await faceapi.detectAllFaces(tensor, new faceapi.SsdMobilenetv1Options({ minConfidence, maxResults: 200 }));
      const faces = found.map((face) => ({
        x: Math.max(0, face.box.x / width),
        y: Math.max(0, face.box.y / height),
        w: Math.min(1, (face.box.x + face.box.width) / width) - Math.max(0, face.box.x / width),
        h: Math.min(1, (face.box.y + face.box.height) / height) - Math.max(0, face.box.y / height),
        score: face.score,
      })).filter((face) => face.w > 0 && face.h > 0);
      parentPort.postMessage({ id, faces });
    } finally {
      tensor.dispose();
    }
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.stack || error) });
  }
});
`;

type Reply = { id: number; faces: DetectedFace[] } | { id: number; error: string };

/** A thread running the model: detections answered in turn. */
interface DetectorThread {
  detect(rgb: Uint8Array, width: number, height: number, minConfidence: number): Promise<DetectedFace[]>;
  close(): Promise<void>;
}

/**
 * The model on a thread of its own, started on first use and kept while anything is pending
 * (unref'd otherwise, so it never keeps a process alive). Calls are answered in turn: the model
 * uses one core, and a second thread would only share the same two cores with ffmpeg and sharp.
 */
function detectorThread(): DetectorThread {
  let thread: Worker | undefined;
  let nextId = 0;
  const pending = new Map<number, { resolve: (faces: DetectedFace[]) => void; reject: (error: Error) => void }>();

  const failAll = (error: Error) => {
    for (const call of pending.values()) call.reject(error);
    pending.clear();
  };
  const theThread = (): Worker => {
    if (thread) return thread;
    const started = new Worker(THREAD_CODE, { eval: true, workerData: { ...faceModelFiles(), model: FACE_MODEL } });
    started.on('message', (reply: Reply) => {
      const call = pending.get(reply.id);
      if (!call) return;
      pending.delete(reply.id);
      if (pending.size === 0) started.unref();
      if ('error' in reply) call.reject(new Error(`face detection failed: ${reply.error}`));
      else call.resolve(reply.faces);
    });
    const gone = (error: Error) => {
      if (thread === started) thread = undefined;
      failAll(error);
    };
    started.on('error', gone);
    started.on('exit', (code) => gone(new Error(`the face detector's thread stopped (exit code ${code})`)));
    started.unref();
    thread = started;
    return started;
  };

  return {
    detect(rgb, width, height, minConfidence) {
      if (rgb.length !== width * height * 3) return Promise.reject(new Error(`expected ${width}x${height} RGB, got ${rgb.length} bytes`));
      return new Promise((resolve, reject) => {
        const id = nextId++;
        const worker = theThread();
        pending.set(id, { resolve, reject });
        worker.ref();
        // A copy is handed over (transferred, not cloned): the caller may reuse its buffer.
        const copy = new Uint8Array(rgb).buffer;
        worker.postMessage({ id, rgb: copy, width, height, minConfidence }, [copy]);
      });
    },
    async close() {
      const current = thread;
      thread = undefined;
      if (current) await current.terminate();
    },
  };
}

/** A detector with a thread of its own (closed with it). */
export function createFaceDetector({ minConfidence }: { minConfidence: number }): FaceDetector {
  const own = detectorThread();
  return { detect: (rgb, width, height) => own.detect(rgb, width, height, minConfidence), close: () => own.close() };
}

let processThread: DetectorThread | undefined;

/**
 * A detector on the process's one model thread: the model is loaded once per process, however
 * many media workers it starts (the all-in-one process starts one; a test process many, one after
 * the other). Closing it leaves the thread to others; idle, it keeps nothing alive.
 */
export function sharedFaceDetector({ minConfidence }: { minConfidence: number }): FaceDetector {
  processThread ??= detectorThread();
  const shared = processThread;
  return { detect: (rgb, width, height) => shared.detect(rgb, width, height, minConfidence), close: async () => undefined };
}
