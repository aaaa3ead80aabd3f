import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { apiErrorSchema } from './errors.js';
import {
  adminUserUpdateSchema,
  checkRequestSchema,
  checkResponseSchema,
  loginRequestSchema,
  okResponseSchema,
  resendLinkResponseSchema,
  pageQuerySchema,
  profileUpdateSchema,
  registerRequestSchema,
  sessionProbeSchema,
  userSchema,
} from './users.js';
import { publicConfigSchema } from './public-config.js';
import {
  APPOINTMENT_CSV_MAX_BYTES,
  adminAppointmentSchema,
  announcePreviewSchema,
  announceRequestSchema,
  announceResultSchema,
  appointmentCreateSchema,
  appointmentImportResultSchema,
  appointmentUpdateSchema,
  callSheetQuerySchema,
  callSheetSchema,
  dryRunQuerySchema,
  myAppointmentSchema,
} from './appointments.js';
import { auditEntrySchema, auditFilterSchema, auditQuerySchema } from './audit.js';
import { investigatorExportQuerySchema } from './investigator-export.js';
import {
  bulkVisibilityResponseSchema,
  createEvidenceSchema,
  adminEvidenceListQuerySchema,
  evidenceCountsSchema,
  evidenceListQuerySchema,
  evidenceSchema,
  idempotencyKeyField,
  markReviewedRequestSchema,
  markReviewedResponseSchema,
  selectedVisibilityRequestSchema,
  selectedVisibilityResponseSchema,
  updateEvidenceSchema,
} from './evidence.js';
import { editFacesRequestSchema, evidenceFacesSchema, facesConsentRequestSchema } from './faces.js';
import {
  checkCodeRequestSchema,
  checkCodeResponseSchema,
  checkEmailRequestSchema,
  checkEmailResponseSchema,
  passwordUpdateBodySchema,
  resendCodeRequestSchema,
  sendCodeBodySchema,
} from './password-reset.js';

const json = <S extends z.ZodType>(schema: S) => ({ content: { 'application/json': { schema } } });
const error = (description: string) => ({ description, ...json(apiErrorSchema) });
/** A JSON request body; every route that takes one needs it. */
const body = <S extends z.ZodType>(schema: S) => ({ required: true, ...json(schema) });

const binary = z.string().meta({ format: 'binary' });
const sessionCookie = { cookieAuth: [] };
const userIdPath = z.object({ id: z.string().meta({ description: 'User id (UUID)' }) });
const nextLink = {
  Link: z.string().optional().meta({
    description: 'RFC 8288 link to the next page, present while there is one: </path?limit=50&cursor=...>; rel="next"',
  }),
};

const commonErrors = {
  '400': error('The input breaks a rule; message says which, fields say where'),
  '429': error('Too many requests from this address or for this account, or too many uploads at once for this participant'),
};
const signedIn = { ...commonErrors, '401': error('No session: log in first') };
/** Routes that count against a participant's uploads at once (the gateway's upload guard). */
const uploadShareUnavailable = {
  '503': error(
    'The count of uploads running at once could not be read (the shared store did not answer): nothing was taken; try again shortly',
  ),
};
const adminOnly = { ...signedIn, '403': error('Only administrators may do this') };

function op(operation: ZodOpenApiOperationObject): ZodOpenApiOperationObject {
  return operation;
}

const paths: ZodOpenApiPathsObject = {
  '/api/config': {
    get: op({
      summary: 'Event-specific words and links (product name, meeting place, videos)',
      tags: ['config'],
      responses: { '200': { description: 'The public configuration', ...json(publicConfigSchema) } },
    }),
  },
  '/api/user/register': {
    post: op({
      summary: 'Register a participant (role 1) with a face photo',
      description: 'Limited per client address (REGISTER_RATE_LIMIT_PER_MINUTE, 30 by default): past it, 429 before the body is read.',
      tags: ['users'],
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: registerRequestSchema.extend({
              verification_photo: binary.meta({ description: 'A clear face photo (JPEG, PNG, WebP, GIF or AVIF); its content is checked' }),
              role: z.string().optional().meta({ description: 'Ignored: self-registration always gets role 1' }),
              usernameOrEmail: z.string().optional().meta({ description: 'Ignored' }),
            }),
          },
        },
      },
      responses: {
        '201': { description: 'The new user', ...json(userSchema) },
        ...commonErrors,
        '409': error('The username or e-mail address is taken'),
        '408': error('The body stopped arriving: no byte came for UPLOAD_IDLE_TIMEOUT_MS'),
        '413': error('The photo is too large'),
        '415': error('The photo is not an image'),
      },
    }),
  },
  '/api/user/check': {
    post: op({
      summary: 'Is a username or e-mail address taken?',
      tags: ['users'],
      requestBody: body(checkRequestSchema),
      responses: { '200': { description: 'Whether an account exists', ...json(checkResponseSchema) }, ...commonErrors },
    }),
  },
  '/api/user/login': {
    post: op({
      summary: 'Log in with username or e-mail; sets the httpOnly session cookie',
      tags: ['users'],
      requestBody: body(loginRequestSchema),
      responses: {
        '200': { description: 'Logged in; a new session cookie is set', ...json(userSchema) },
        ...commonErrors,
        '401': error("The username and password didn't match"),
      },
    }),
  },
  '/api/user/logout': {
    post: op({
      summary: 'End this session and clear the cookie',
      description: 'Also answers Clear-Site-Data: "cache", so that a shared phone keeps none of the pictures and pages the person saw.',
      tags: ['users'],
      responses: { '200': { description: 'Logged out', ...json(okResponseSchema) } },
    }),
  },
  '/api/user': {
    get: op({
      summary: 'The signed-in user',
      tags: ['users'],
      security: [sessionCookie],
      responses: { '200': { description: 'The user object itself', ...json(userSchema) }, '401': error('No session') },
    }),
  },
  '/api/session': {
    get: op({
      summary: 'Who is signed in: the user, or null for a visitor (never 401; the web app asks this on every first load)',
      tags: ['users'],
      security: [sessionCookie, {}],
      responses: { '200': { description: 'The signed-in user, or user null', ...json(sessionProbeSchema) } },
    }),
  },
  '/api/evidence/user': {
    put: op({
      summary: "Update one's own profile, optionally with a new avatar",
      description:
        'A new e-mail address needs current_password (400 when it is missing or wrong; ten wrong ones in 15 minutes answer 429); the old address is told of the change. Without a change of address no password is needed.',
      tags: ['users'],
      security: [sessionCookie],
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: profileUpdateSchema.extend({ file: binary.optional().meta({ description: 'New avatar image' }) }),
          },
          'application/json': { schema: profileUpdateSchema },
        },
      },
      responses: {
        '200': { description: 'The updated user', ...json(userSchema) },
        ...signedIn,
        '409': error('The e-mail address belongs to another account'),
        '408': error('The body stopped arriving: no byte came for UPLOAD_IDLE_TIMEOUT_MS'),
        '413': error('The avatar is too large'),
        '415': error('The avatar is not an image'),
        ...uploadShareUnavailable,
      },
    }),
  },
  '/api/user/watched/{id}': {
    put: op({
      summary: 'Mark the onboarding video as watched (oneself, or anyone for an administrator)',
      tags: ['users'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      responses: {
        '200': { description: 'The updated user', ...json(userSchema) },
        ...signedIn,
        '403': error("Another participant's account"),
        '404': error('No such user'),
      },
    }),
  },
  '/api/user/users': {
    get: op({
      summary: 'All users, oldest first, a page at a time (administrators)',
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { query: pageQuerySchema },
      responses: {
        '200': { description: 'One page of users', headers: z.object(nextLink), ...json(z.array(userSchema)) },
        ...adminOnly,
      },
    }),
  },
  '/api/user/admin/{id}': {
    put: op({
      summary: "Edit a user's username, e-mail, phone number and full name (administrators)",
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      requestBody: body(adminUserUpdateSchema),
      responses: {
        '200': { description: 'The updated user; role and video_watched unchanged', ...json(userSchema) },
        ...adminOnly,
        '404': error('No such user'),
        '409': error('The username or e-mail address is taken'),
      },
    }),
  },
  '/api/user/{id}': {
    delete: op({
      summary: 'Delete a user; their sessions end at once and their data is removed everywhere (administrators)',
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      responses: {
        '200': { description: 'Deleted', ...json(okResponseSchema) },
        ...adminOnly,
        '404': error('No such user'),
      },
    }),
  },
  '/api/user/{id}/avatar': {
    get: op({
      summary: "A user's avatar (its owner and administrators only; public answers carry no avatar)",
      tags: ['users'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      responses: {
        '200': {
          description: 'WebP image, never stored by any cache (Cache-Control: private, no-store)',
          content: { 'image/webp': { schema: binary } },
        },
        '304': { description: 'Not modified (If-None-Match or If-Modified-Since)' },
        '401': error('No session'),
        '403': error("Another participant's avatar"),
        '404': error('No avatar'),
      },
    }),
  },
  '/api/user/{id}/export': {
    get: op({
      summary: 'Everything the portal holds on one user, as one zip archive (administrators)',
      description:
        'profile.json (every field of the account except the password hash, the e-mail verified state, a pending reset code), ' +
        "the verification photo and avatar, evidence.json (every stored field of every item) and each item's files " +
        '(the original and every derivative) under evidence/<id>/, and appointment.json (the appointment, its phone number and what became of each of its messages). The archive is streamed as it is made.',
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      responses: {
        '200': {
          description: 'A zip archive (Content-Disposition: attachment)',
          content: { 'application/zip': { schema: binary } },
        },
        ...adminOnly,
        '404': error('No such user'),
        '503': error('The evidence service did not answer; nothing was sent'),
      },
    }),
  },
  '/api/admin/activity': {
    get: op({
      summary: 'The audit log: administrative acts, newest first, a page at a time (administrators)',
      description:
        'Who did what to which item or account, when, with the values before and after where they apply. ' +
        'Entries about a deleted participant stay, without anything that identifies them (erased: true).',
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { query: auditQuerySchema },
      responses: {
        '200': { description: 'One page of entries', headers: z.object(nextLink), ...json(z.array(auditEntrySchema)) },
        ...adminOnly,
      },
    }),
  },
  '/api/admin/activity.csv': {
    get: op({
      summary: 'Every audit log entry matching the filters, as one CSV file (administrators)',
      description:
        'Columns: at, actor_username, actor_id, action, target_type, target_id, target_label, before, after, details ' +
        '(the last three as JSON), erased. A text value a spreadsheet would run as a formula starts with an apostrophe.',
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { query: auditFilterSchema },
      responses: {
        '200': { description: 'CSV (Content-Disposition: attachment)', content: { 'text/csv': { schema: z.string() } } },
        ...adminOnly,
      },
    }),
  },
  '/api/user/{id}/verification-photo': {
    get: op({
      summary: "A user's verification photo (its owner and administrators only)",
      tags: ['users'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      responses: {
        '200': {
          description: 'JPEG image, never stored by any cache (Cache-Control: private, no-store)',
          content: { 'image/jpeg': { schema: binary } },
        },
        '304': { description: 'Not modified (If-None-Match or If-Modified-Since)' },
        '401': error('No session'),
        '403': error("Another participant's photo"),
        '404': error('No photo'),
      },
    }),
  },
};

const evidenceIdPath = z.object({ id: z.string().meta({ description: 'Evidence id (UUID)' }) });
const evidencePage = (description: string) => ({ description, headers: z.object(nextLink), ...json(z.array(evidenceSchema)) });
const tusHeaders = {
  'Tus-Resumable': z.literal('1.0.0'),
};
const tusErrors = {
  ...signedIn,
  '400': error('A tus header (Upload-Offset, Upload-Length, Upload-Metadata, Content-Type) is malformed, or the metadata breaks a rule'),
  '412': error('The Tus-Resumable: 1.0.0 header is missing or names another version'),
};
const multipartEvidence = createEvidenceSchema.extend({
  file: binary.optional().meta({
    description: 'A photo, video or audio recording; its type is decided from its bytes. Without a file the item is a note (type 1).',
  }),
});

const evidencePaths: ZodOpenApiPathsObject = {
  '/api/evidence': {
    post: op({
      summary: 'Add evidence: a note, or a file sent whole (use the resumable upload for large files)',
      tags: ['evidence'],
      security: [sessionCookie],
      requestParams: { header: z.object({ 'Idempotency-Key': idempotencyKeyField.optional() }) },
      requestBody: {
        required: true,
        content: { 'multipart/form-data': { schema: multipartEvidence }, 'application/json': { schema: createEvidenceSchema } },
      },
      responses: {
        '201': { description: 'The new item; media items start as processing', ...json(evidenceSchema) },
        '200': { description: 'A note with this Idempotency-Key was already made: that item, unchanged', ...json(evidenceSchema) },
        ...signedIn,
        '403': error('A participant who has not watched the onboarding video yet'),
        '408': error('The body stopped arriving: no byte came for UPLOAD_IDLE_TIMEOUT_MS'),
        '413': error('The file is over the size limit of its type, or a video or recording over the length limit'),
        '415': error('Not a photo, video or audio recording the portal can read, or one with more tracks than allowed'),
        ...uploadShareUnavailable,
      },
    }),
    get: op({
      summary: "One's own evidence, newest first",
      tags: ['evidence'],
      security: [sessionCookie],
      requestParams: { query: evidenceListQuerySchema },
      responses: { '200': evidencePage('One page of items'), ...signedIn },
    }),
  },
  '/api/evidence/public': {
    get: op({
      summary: 'The public archive: public items whose media is ready, newest first',
      description:
        'With q, only items whose title or notes have every word searched for. A position recorded by "Add my location" ' +
        '("lat, long (±m)") is rounded to PUBLIC_LOCATION_DECIMALS decimals here (3: about 100 m); free-text locations are as written.',
      tags: ['archive'],
      requestParams: { query: evidenceListQuerySchema },
      responses: { '200': evidencePage('One page of public items (no e-mail, phone or verification photo in them)'), ...commonErrors },
    }),
  },
  '/api/evidence/admin': {
    get: op({
      summary: 'All evidence (administrators)',
      description: 'review_status=new is the review queue; q searches titles and notes; all filters combine. Locations are exact.',
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { query: adminEvidenceListQuerySchema },
      responses: { '200': evidencePage('One page of items'), ...adminOnly },
    }),
  },
  '/api/evidence/admin/counts': {
    get: op({
      summary: 'How many items wait for review, and how many are public and private (administrators)',
      tags: ['administration'],
      security: [sessionCookie],
      responses: { '200': { description: 'The counts', ...json(evidenceCountsSchema) }, ...adminOnly },
    }),
  },
  '/api/evidence/visibility': {
    put: op({
      summary: 'Publish or unpublish the chosen items, and mark them reviewed (administrators)',
      description:
        'Up to 500 ids a call. Each item changes on its own, all or nothing, with one evidence.visibility-changed event; ' +
        'an item that already had that visibility is only marked reviewed; ids of no item are listed in not_found.',
      tags: ['administration'],
      security: [sessionCookie],
      requestBody: body(selectedVisibilityRequestSchema),
      responses: { '200': { description: 'What happened to each id', ...json(selectedVisibilityResponseSchema) }, ...adminOnly },
    }),
  },
  '/api/evidence/review': {
    put: op({
      summary: 'Mark the chosen items reviewed, leaving their visibility (administrators)',
      description: 'Up to 500 ids a call; one evidence.reviewed event per item that was new; ids of no item are listed in not_found.',
      tags: ['administration'],
      security: [sessionCookie],
      requestBody: body(markReviewedRequestSchema),
      responses: { '200': { description: 'What happened to each id', ...json(markReviewedResponseSchema) }, ...adminOnly },
    }),
  },
  '/api/evidence/review/{id}': {
    put: op({
      summary: 'Mark one item reviewed, leaving its visibility (administrators)',
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { path: evidenceIdPath },
      responses: { '200': { description: 'The item, reviewed', ...json(evidenceSchema) }, ...adminOnly, '404': error('No such item') },
    }),
  },
  '/api/evidence/{id}/faces': {
    get: {
      summary: 'The faces found in a photo or video, with the decisions on them (administrators)',
      description:
        'Regions in fractions of the upright picture; a video region follows a face from sample to sample. What the public is given ' +
        'follows from them: the blurred copies, or the picture as it is when nothing is to hide or consent is on record.',
      tags: ['evidence'],
      requestParams: { path: evidenceIdPath },
      responses: { '200': { description: 'The faces', ...json(evidenceFacesSchema) }, ...adminOnly, '404': error('No such item') },
    },
    put: {
      summary: 'Remove, restore or add face regions (administrators)',
      description:
        'On the version seen (`base`; another version answers 409). The public copies are made again: after a box is added or a ' +
        'region restored the public sees nothing of the item until they are; after removals only, the copies it had meanwhile. ' +
        'One evidence.faces-changed event and one evidence.faces-edit audit entry.',
      tags: ['evidence'],
      requestParams: { path: evidenceIdPath },
      requestBody: { content: { 'application/json': { schema: editFacesRequestSchema } } },
      responses: {
        '200': { description: 'The faces after the change', ...json(evidenceFacesSchema) },
        ...adminOnly,
        '404': error('No such item'),
        '409': error('The regions changed meanwhile, or the faces are still being looked for'),
      },
    },
  },
  '/api/evidence/{id}/faces/consent': {
    put: {
      summary: 'Record that the faces may be shown, or take it back (administrators)',
      description: 'With consent the public gets the picture as it is. One evidence.faces-consent audit entry (with the note).',
      tags: ['evidence'],
      requestParams: { path: evidenceIdPath },
      requestBody: { content: { 'application/json': { schema: facesConsentRequestSchema } } },
      responses: { '200': { description: 'The faces', ...json(evidenceFacesSchema) }, ...adminOnly, '404': error('No such item') },
    },
  },
  '/api/evidence/export': {
    get: op({
      summary: "The investigator's export: chosen or filtered evidence as one zip archive (administrators)",
      description:
        'manifest.csv and manifest.json (id, title, notes, location, type, posted, author, public, review_status, files) and ' +
        'the display copy of every item under media/<id>/ (with originals=true its original too). Streamed as it is made; ' +
        'manifest.json lists requested ids that no longer exist under `missing`. Recorded in the audit log.',
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { query: investigatorExportQuerySchema },
      responses: {
        '200': { description: 'A zip archive (Content-Disposition: attachment)', content: { 'application/zip': { schema: binary } } },
        ...adminOnly,
        // The ids travel in the query: a request head over the server's 16 KB is refused before routing.
        '431': error('The request is too large: choose fewer ids (about 300 fit) or export by the filters'),
      },
    }),
  },
  '/api/user/{id}/evidence': {
    get: op({
      summary: "A participant's evidence (administrators)",
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { path: userIdPath, query: evidenceListQuerySchema },
      responses: { '200': evidencePage('One page of items'), ...adminOnly, '404': error('No such user (the id is not a user id)') },
    }),
  },
  '/api/evidence/item/{id}': {
    get: op({
      summary: 'One item (its owner, administrators, or anyone once it is public); used to follow processing',
      description:
        'The owner and administrators get the exact location (Cache-Control: private, no-store); everyone else gets ' +
        'a position from "Add my location" rounded to PUBLIC_LOCATION_DECIMALS decimals (public, max-age=30).',
      tags: ['evidence'],
      requestParams: { path: evidenceIdPath },
      responses: {
        '200': { description: 'The item', ...json(evidenceSchema) },
        '404': error('No such item, or not visible to the caller'),
      },
    }),
  },
  '/api/evidence/update/{id}': {
    put: op({
      summary: 'Edit title and notes (owner or administrator); the owner may replace the file with one of the same kind',
      description:
        "A participant's own edit (or new file) takes a public item out of the archive and puts it back in the review " +
        "queue (is_public false, review_status new) until an administrator publishes it again; an administrator's edit does not.",
      tags: ['evidence'],
      security: [sessionCookie],
      requestParams: { path: evidenceIdPath },
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': { schema: updateEvidenceSchema.extend({ file: binary.optional() }) },
          'application/json': { schema: updateEvidenceSchema },
        },
      },
      responses: {
        '200': { description: 'The updated item', ...json(evidenceSchema) },
        ...signedIn,
        '403': error("Someone else's evidence"),
        '404': error('No such item'),
        '408': error('The body stopped arriving: no byte came for UPLOAD_IDLE_TIMEOUT_MS'),
        '413': error('The file is over the size limit of its type, or a video or recording over the length limit'),
        '415': error('Not a photo, video or audio recording the portal can read, or one with more tracks than allowed'),
        ...uploadShareUnavailable,
      },
    }),
  },
  '/api/evidence/delete/{id}': {
    delete: op({
      summary: 'Delete an item and its files (owner or administrator)',
      tags: ['evidence'],
      security: [sessionCookie],
      requestParams: { path: evidenceIdPath },
      responses: {
        '200': { description: 'Deleted', ...json(okResponseSchema) },
        ...signedIn,
        '403': error("Someone else's evidence"),
        '404': error('No such item'),
      },
    }),
  },
  '/api/evidence/clearance/{id}': {
    put: op({
      summary: "Toggle an item's public visibility, and mark it reviewed (administrators)",
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { path: evidenceIdPath },
      responses: {
        '200': { description: 'The item with its new visibility', ...json(evidenceSchema) },
        ...adminOnly,
        '404': error('No such item'),
      },
    }),
  },
  '/api/evidence/makeAllPublic': {
    put: op({
      summary: 'Make every item public (administrators)',
      tags: ['administration'],
      security: [sessionCookie],
      responses: { '200': { description: 'How many items changed', ...json(bulkVisibilityResponseSchema) }, ...adminOnly },
    }),
  },
  '/api/evidence/makeAllSecret': {
    put: op({
      summary: 'Make every item private (administrators)',
      tags: ['administration'],
      security: [sessionCookie],
      responses: { '200': { description: 'How many items changed', ...json(bulkVisibilityResponseSchema) }, ...adminOnly },
    }),
  },
  '/api/evidence/uploads': {
    post: op({
      summary: 'Start a resumable upload (tus 1.0.0 creation). Metadata: title (required), notes, location, filename, idempotencyKey',
      description:
        'The tus protocol (https://tus.io/protocols/resumable-upload): PATCH the bytes to the Location, HEAD it after a dropped connection to learn the offset, and continue. The response to the last PATCH is the new item as JSON. With an idempotencyKey in the metadata, an upload that finishes after another one of the same key answers the item the first one made (no second item).',
      tags: ['evidence'],
      security: [sessionCookie],
      requestParams: {
        header: z.object({
          'Upload-Length': z.string().regex(/^\d+$/).meta({ description: 'Total size in bytes' }),
          'Upload-Metadata': z.string().meta({ description: 'tus metadata: comma-separated "key base64(value)" pairs' }),
          ...tusHeaders,
        }),
      },
      responses: {
        '201': { description: 'Created; the upload URL is in Location', headers: z.object({ Location: z.string() }) },
        ...tusErrors,
        '403': error('A participant who has not watched the onboarding video yet'),
        '408': error('The body stopped arriving: no byte came for UPLOAD_IDLE_TIMEOUT_MS'),
        '413': error(
          "Larger than the largest file allowed, or more than one participant's unfinished uploads may hold together (UPLOAD_UNFINISHED_BYTES_PER_PARTICIPANT)",
        ),
        '503': error(
          "The unfinished-uploads share could not be checked (the replicas' shared store did not answer): nothing was created; try again shortly",
        ),
      },
    }),
  },
  '/api/evidence/uploads/{uploadId}': {
    head: op({
      summary: 'How many bytes of an upload the server has (the participant who started it only)',
      tags: ['evidence'],
      security: [sessionCookie],
      requestParams: { path: z.object({ uploadId: z.string() }), header: z.object(tusHeaders) },
      responses: {
        '200': { description: 'Upload-Offset and Upload-Length headers; X-Evidence-Id once finished' },
        ...tusErrors,
        '403': error("Someone else's upload"),
        '404': error('No such upload (expired after 24 hours without progress)'),
        '503': error('All bytes are stored but too many uploads are being finished at this moment: ask again after Retry-After'),
      },
    }),
    patch: op({
      summary: 'Send bytes from Upload-Offset (application/offset+octet-stream)',
      tags: ['evidence'],
      security: [sessionCookie],
      requestParams: {
        path: z.object({ uploadId: z.string() }),
        header: z.object({
          'Upload-Offset': z.string().regex(/^\d+$/).meta({ description: 'Bytes the server has (from HEAD)' }),
          ...tusHeaders,
        }),
      },
      requestBody: { content: { 'application/offset+octet-stream': { schema: binary } } },
      responses: {
        '200': { description: 'The last bytes arrived: the new item', ...json(evidenceSchema) },
        '204': { description: 'Bytes stored; Upload-Offset tells how many the server has' },
        ...tusErrors,
        '403': error("Someone else's upload"),
        '404': error('No such upload (expired after 24 hours without progress)'),
        '409': error('Upload-Offset does not match what the server has'),
        '408': error('The body stopped arriving: no byte came for UPLOAD_IDLE_TIMEOUT_MS'),
        '413': error('The file is over the size limit of its type, or a video or recording over the length limit'),
        '415': error('Not a photo, video or audio recording the portal can read, or one with more tracks than allowed'),
        '503': error(
          'The count of uploads running at once could not be read (nothing was taken); or the last bytes are stored but too many uploads are being finished at this moment (UPLOAD_SCRATCH_BYTES): Retry-After says when to ask again (HEAD), which files the upload',
        ),
      },
    }),
  },
  '/media/evidence/{id}/{variant}': {
    get: op({
      summary: "An item's media: display (WebP/MP4/M4A), thumb (WebP), poster (WebP), original (owner and administrators only)",
      description:
        "Honours Range (206 Partial Content) for seeking. Public items' derivatives are cacheable by anyone for an hour; everything else (private items, every original) is never stored by any cache (Cache-Control: private, no-store). Answers If-None-Match and If-Modified-Since with 304.",
      tags: ['evidence'],
      requestParams: {
        path: z.object({ id: z.string(), variant: z.enum(['display', 'thumb', 'poster', 'original']) }),
        header: z.object({ Range: z.string().optional().meta({ description: 'e.g. bytes=0-1023' }) }),
      },
      responses: {
        '200': { description: 'The whole file' },
        '206': { description: 'The requested range' },
        '304': { description: 'Not modified (If-None-Match or If-Modified-Since)' },
        '404': error('No such item or media, or not visible to the caller'),
        '416': error('The range is outside the file'),
      },
    }),
  },
};

const appointmentIdPath = z.object({ id: z.string().meta({ description: 'Appointment id (UUID)' }) });

const appointmentPaths: ZodOpenApiPathsObject = {
  '/api/appointments/mine': {
    get: op({
      summary: "The signed-in participant's appointment (time with its zone, place, the number that will be called), or null",
      description:
        'The appointment under the account’s address, once the account has confirmed that address (email_confirmed); until then appointment is null whether or not one waits there.',
      tags: ['appointments'],
      security: [sessionCookie],
      responses: { '200': { description: 'The appointment and whether text reminders are on', ...json(myAppointmentSchema) }, ...signedIn },
    }),
  },
  '/api/appointments/mine.ics': {
    get: op({
      summary: "The participant's appointment as an iCalendar file (a VEVENT with a VALARM at the smallest reminder offset)",
      tags: ['appointments'],
      security: [sessionCookie],
      responses: {
        '200': { description: 'text/calendar (attachment)', content: { 'text/calendar': { schema: z.string() } } },
        ...signedIn,
        '404': error('No appointment yet'),
      },
    }),
  },
  '/api/appointments/import': {
    post: op({
      summary: "Import the box office's appointments as CSV (administrators)",
      description:
        `A header line names the columns: email and start required; name, phone, place, note optional (any order, any case). Times without an offset are read in EVENT_TIMEZONE. ` +
        `One appointment per address: an address that has one is updated (moved, when the start changes). Refusals carry the line number (the header is line 1) and a reason. ` +
        `With dry_run=true the answer is what the import would do, by the same reading and decisions, and nothing is written. ` +
        `At most ${APPOINTMENT_CSV_MAX_BYTES / 1024 / 1024} MB. Recorded in the audit log (not a dry run).`,
      tags: ['appointments'],
      security: [sessionCookie],
      requestParams: { query: dryRunQuerySchema },
      requestBody: {
        required: true,
        content: { 'multipart/form-data': { schema: z.object({ file: binary.meta({ description: 'The CSV file (UTF-8)' }) }) } },
      },
      responses: {
        '200': {
          description: 'What was (or would be) created, updated, left unchanged and refused',
          ...json(appointmentImportResultSchema),
        },
        ...adminOnly,
        '413': error('The file is too large'),
      },
    }),
  },
  '/api/appointments': {
    get: op({
      summary:
        "A day's call sheet (administrators): the appointments in time order with name, pronouns, photo, number, reminders and status",
      description:
        "Without a day, today's in EVENT_TIMEZONE. Phone numbers are E.164: phone is the number texts go to (null when it cannot take texts, phone_problem saying why), call_number the one to call (a landline too). Poll it to see other performers' status changes.",
      tags: ['appointments'],
      security: [sessionCookie],
      requestParams: { query: callSheetQuerySchema },
      responses: { '200': { description: 'The call sheet', ...json(callSheetSchema) }, ...adminOnly },
    }),
    post: op({
      summary: 'Set one appointment (administrators); an address that has one has it moved',
      tags: ['appointments'],
      security: [sessionCookie],
      requestBody: body(appointmentCreateSchema),
      responses: {
        '201': { description: 'Created', ...json(adminAppointmentSchema) },
        '200': { description: 'The address had one: moved or changed', ...json(adminAppointmentSchema) },
        ...adminOnly,
        '409': error('Changed by someone else meanwhile'),
      },
    }),
  },
  '/api/appointments/announce': {
    post: op({
      summary: 'Send one message to the participants of a day (or a time range of it) by e-mail and text (administrators)',
      description:
        'Either message, or a ready text (bad-weather names LIBRARY_ENTRYWAY). Recorded in the audit log. With dry_run=true nothing is sent: ' +
        'the answer is how many participants the same selection reaches and the words that would go (message and text may then both be left out, for the count alone).',
      tags: ['appointments'],
      security: [sessionCookie],
      requestParams: { query: dryRunQuerySchema },
      requestBody: body(announceRequestSchema),
      responses: {
        '202': { description: 'Queued for each participant', ...json(announceResultSchema) },
        '200': { description: 'dry_run=true: whom it would reach, and its words', ...json(announcePreviewSchema) },
        ...adminOnly,
      },
    }),
  },
  '/api/appointments/user/{id}': {
    get: op({
      summary: "An account's appointment, for the user dialog (administrators)",
      tags: ['appointments'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      responses: {
        '200': { description: 'The appointment or null', ...json(z.object({ appointment: adminAppointmentSchema.nullable() })) },
        ...adminOnly,
        '404': error('No such user'),
      },
    }),
  },
  '/api/appointments/{id}': {
    get: op({
      summary: 'One appointment (administrators)',
      tags: ['appointments'],
      security: [sessionCookie],
      requestParams: { path: appointmentIdPath },
      responses: {
        '200': { description: 'The appointment', ...json(adminAppointmentSchema) },
        ...adminOnly,
        '404': error('No such appointment'),
      },
    }),
    patch: op({
      summary: "Move an appointment, change its name, place, note or number, or set the performers' status (administrators)",
      description: 'A move sends a new confirmation and moves the reminders; a status change does not. Recorded in the audit log.',
      tags: ['appointments'],
      security: [sessionCookie],
      requestParams: { path: appointmentIdPath },
      requestBody: body(appointmentUpdateSchema),
      responses: {
        '200': { description: 'The appointment', ...json(adminAppointmentSchema) },
        ...adminOnly,
        '404': error('No such appointment'),
        '409': error('Changed by someone else meanwhile'),
      },
    }),
    delete: op({
      summary: 'Cancel an appointment and its reminders (administrators)',
      tags: ['appointments'],
      security: [sessionCookie],
      requestParams: { path: appointmentIdPath },
      responses: { '200': { description: 'Cancelled', ...json(okResponseSchema) }, ...adminOnly, '404': error('No such appointment') },
    }),
  },
};

const resetPaths: ZodOpenApiPathsObject = {
  '/api/email/check-email': {
    post: op({
      summary: 'Is there an account with this e-mail address?',
      tags: ['password reset'],
      requestBody: body(checkEmailRequestSchema),
      responses: { '200': { description: 'Whether it exists', ...json(checkEmailResponseSchema) }, ...commonErrors },
    }),
  },
  '/api/email/send': {
    post: op({
      summary: 'E-mail a new six-digit reset code (valid 15 minutes, replaces any earlier one)',
      description: 'Also accepts the legacy body [code, email]; a code sent by the client is ignored.',
      tags: ['password reset'],
      requestBody: body(sendCodeBodySchema),
      responses: {
        '200': { description: 'A code is on its way', ...json(okResponseSchema) },
        ...commonErrors,
        '404': error('No account has that e-mail address'),
      },
    }),
  },
  '/api/email/reset-code': {
    put: op({
      summary: 'E-mail another code (request another code)',
      tags: ['password reset'],
      requestBody: body(resendCodeRequestSchema),
      responses: {
        '200': { description: 'A new code is on its way', ...json(okResponseSchema) },
        ...commonErrors,
        '404': error('No account has that e-mail address'),
      },
    }),
  },
  '/api/email/check/reset-code': {
    post: op({
      summary: 'Is this the live code? A wrong code spends one of five attempts',
      tags: ['password reset'],
      requestBody: body(checkCodeRequestSchema),
      responses: { '200': { description: 'Whether it matches', ...json(checkCodeResponseSchema) }, ...commonErrors },
    }),
  },
  '/api/user/passwordupdated': {
    put: op({
      summary: 'Set a new password with the e-mailed code; ends every session of the account',
      description: 'Body { email, code, password }, or that object inside an array (legacy).',
      tags: ['password reset'],
      requestBody: body(passwordUpdateBodySchema),
      responses: { '200': { description: 'Password updated', ...json(okResponseSchema) }, ...commonErrors },
    }),
  },
  '/api/user/verify-email/resend': {
    post: op({
      summary:
        'A new confirmation link for the signed-in account’s address (the earlier one expired after 7 days, or was signed with a retired secret)',
      description:
        'Limited to 5 an hour per account and per address the link goes to, and 50 an hour per client address (a venue’s shared network). An address already confirmed gets no link (200, sent: false).',
      tags: ['users'],
      security: [sessionCookie],
      responses: {
        '202': { description: 'A new link is on its way', ...json(resendLinkResponseSchema) },
        '200': { description: 'The address is already confirmed: nothing sent', ...json(resendLinkResponseSchema) },
        ...signedIn,
        '429': error('Too many links asked for: wait a while'),
      },
    }),
  },
  '/api/user/verify-email': {
    get: op({
      summary: 'The link in the confirmation e-mail: confirms the address, then redirects to /verify-email',
      tags: ['users'],
      requestParams: { query: z.object({ token: z.string() }) },
      responses: { '303': { description: 'To /verify-email?status=verified, or ?status=invalid' } },
    }),
  },
};

/**
 * Every body that is not an upload is at most 64 KB (the gateway's limit, and each service's JSON
 * parser): the answer past it is 413, before the session or the role is looked at, on every
 * operation that takes a JSON body.
 */
const jsonBodyTooLarge = error('The request body is too large (at most 64 KB)');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function withJsonBodyLimit(all: ZodOpenApiPathsObject): ZodOpenApiPathsObject {
  return Object.fromEntries(
    Object.entries(all).map(([path, item]) => {
      const operations = { ...item };
      for (const method of METHODS) {
        const operation = operations[method];
        const requestBody = operation?.requestBody;
        const takesJson = requestBody !== undefined && 'content' in requestBody && requestBody.content['application/json'] !== undefined;
        if (operation && takesJson && !operation.responses?.['413'])
          operations[method] = { ...operation, responses: { ...operation.responses, '413': jsonBodyTooLarge } };
      }
      return [path, operations];
    }),
  );
}

/** The OpenAPI document, generated from the same schemas that validate the requests. */
export function buildOpenApiDocument(): ReturnType<typeof createDocument> {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Evidence portal API',
      version: '1.0.0',
      description:
        'Errors are JSON { code, message, fields? }. Lists are paginated with ?limit= and ?cursor=; the next page is announced in a Link header (rel="next"); the last page has none.',
    },
    components: {
      securitySchemes: {
        cookieAuth: { type: 'apiKey', in: 'cookie', name: 'portal_session', description: 'httpOnly session cookie set by login' },
      },
    },
    paths: withJsonBodyLimit({ ...paths, ...evidencePaths, ...resetPaths, ...appointmentPaths }),
  });
}
