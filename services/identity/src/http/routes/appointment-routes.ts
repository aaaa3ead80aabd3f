import { Router, type RequestHandler } from 'express';
import multer from 'multer';
import {
  APPOINTMENT_CSV_MAX_BYTES,
  appointmentCreateSchema,
  appointmentUpdateSchema,
  announcePreviewRequestSchema,
  announceRequestSchema,
  callSheetQuerySchema,
  deliveryReportSchema,
  dryRunQuerySchema,
} from '@portal/contracts';
import {
  badRequest,
  formatBytes,
  notFound,
  parseInput,
  payloadTooLarge,
  requireAdmin,
  requireCaller,
  requireServiceToken,
  route,
  uuidParam,
  type IdentityTokens,
} from '@portal/platform';
import type { AppointmentService } from '../../domain/appointment-service.js';
import { userIdParam } from './admin-routes.js';

const appointmentId = (value: unknown) => uuidParam(value, 'No such appointment');

/** The CSV in the multipart field `file`, in memory (it is small and read whole). */
function csvUpload(): RequestHandler {
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: APPOINTMENT_CSV_MAX_BYTES, files: 1, fields: 5, parts: 6 },
  }).single('file');
  const tooLarge = `The CSV file is too large (at most ${formatBytes(APPOINTMENT_CSV_MAX_BYTES)})`;
  return (req, res, next) => {
    if (Number(req.headers['content-length']) > APPOINTMENT_CSV_MAX_BYTES + 64 * 1024) {
      res.set('Connection', 'close');
      return next(payloadTooLarge(tooLarge));
    }
    upload(req, res, (error: unknown) => {
      const code = (error as { code?: string } | undefined)?.code;
      if (code === 'LIMIT_FILE_SIZE') return next(payloadTooLarge(tooLarge));
      if (code === 'LIMIT_UNEXPECTED_FILE')
        return next(badRequest('Send the CSV in the form field "file"', { file: 'Send the CSV in the form field "file"' }));
      next(error);
    });
  };
}

/**
 * Appointments: administrators import, set, move, cancel, list the day and announce; a participant
 * reads only their own (mine, mine.ics). Every check is here, on the server.
 */
export function appointmentRoutes({ appointments }: { appointments: AppointmentService }): Router {
  const router = Router();

  router.get(
    '/api/appointments/mine',
    route(async (req, res) => {
      const caller = requireCaller(req);
      res.set('Cache-Control', 'private, no-store');
      res.json(await appointments.mine(caller));
    }),
  );

  router.get(
    '/api/appointments/mine.ics',
    route(async (req, res) => {
      const caller = requireCaller(req);
      // The host names the event's UID (stable per portal); only a host name's characters are kept.
      const calendar = await appointments.mineCalendar(caller, (req.hostname ?? '').replace(/[^A-Za-z0-9.-]/g, '') || 'portal.invalid');
      if (!calendar) throw notFound('You have no appointment yet');
      res.status(200).set({
        'Content-Type': 'text/calendar; charset=utf-8',
        'Content-Disposition': 'attachment; filename="appointment.ics"',
        'Cache-Control': 'private, no-store',
      });
      res.send(calendar);
    }),
  );

  router.post(
    '/api/appointments/import',
    // The role (and the query) are checked before the body is read: nobody else uploads a file here.
    (req, _res, next) => {
      try {
        requireAdmin(req);
        parseInput(dryRunQuerySchema, req.query);
        next();
      } catch (error) {
        next(error);
      }
    },
    csvUpload(),
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const file = req.file;
      if (!file) throw badRequest('Send the CSV in the form field "file"', { file: 'Send the CSV in the form field "file"' });
      const text = new TextDecoder('utf-8', { fatal: false }).decode(file.buffer);
      if (text.includes('\u0000')) throw badRequest('The file is not a CSV text file', { file: 'The file is not a CSV text file' });
      const dryRun = parseInput(dryRunQuerySchema, req.query).dry_run === 'true';
      res.json(await appointments.importCsv(caller, text, file.originalname, { dryRun }));
    }),
  );

  router.get(
    '/api/appointments',
    route(async (req, res) => {
      requireAdmin(req);
      const { date } = parseInput(callSheetQuerySchema, req.query);
      res.set('Cache-Control', 'private, no-store');
      res.json(await appointments.callSheet(date));
    }),
  );

  router.post(
    '/api/appointments',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      const { appointment, created } = await appointments.create(caller, parseInput(appointmentCreateSchema, req.body));
      res.status(created ? 201 : 200).json(appointment);
    }),
  );

  router.post(
    '/api/appointments/announce',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      if (parseInput(dryRunQuerySchema, req.query).dry_run === 'true') {
        res.json(await appointments.previewAnnouncement(parseInput(announcePreviewRequestSchema, req.body)));
        return;
      }
      res.status(202).json(await appointments.announce(caller, parseInput(announceRequestSchema, req.body)));
    }),
  );

  router.get(
    '/api/appointments/user/:id',
    route(async (req, res) => {
      requireAdmin(req);
      res.set('Cache-Control', 'private, no-store');
      res.json({ appointment: await appointments.ofUser(userIdParam(req.params.id)) });
    }),
  );

  router.get(
    '/api/appointments/:id',
    route(async (req, res) => {
      requireAdmin(req);
      res.set('Cache-Control', 'private, no-store');
      res.json(await appointments.get(appointmentId(req.params.id)));
    }),
  );

  router.patch(
    '/api/appointments/:id',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      res.json(await appointments.update(caller, appointmentId(req.params.id), parseInput(appointmentUpdateSchema, req.body)));
    }),
  );

  router.delete(
    '/api/appointments/:id',
    route(async (req, res) => {
      const caller = requireAdmin(req);
      await appointments.cancel(caller, appointmentId(req.params.id));
      res.json({ ok: true, message: 'The appointment is cancelled; its reminders will not be sent' });
    }),
  );

  return router;
}

/** For the notifier only (a service token is required): what a message needs, and what became of it. */
export function internalAppointmentRoutes({ appointments, tokens }: { appointments: AppointmentService; tokens: IdentityTokens }): Router {
  const router = Router();
  router.use('/internal/appointments', requireServiceToken(tokens));
  router.get(
    '/internal/appointments/:id/recipient',
    route(async (req, res) => {
      const recipient = await appointments.recipient(appointmentId(req.params.id));
      if (!recipient) throw notFound('No such appointment');
      res.json(recipient);
    }),
  );
  router.post(
    '/internal/appointments/:id/deliveries',
    route(async (req, res) => {
      const recorded = await appointments.recordDelivery(appointmentId(req.params.id), parseInput(deliveryReportSchema, req.body));
      res.json({ recorded });
    }),
  );
  return router;
}
