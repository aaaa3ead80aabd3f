import Avatar from '@mui/material/Avatar';
import Button from '@mui/material/Button';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { MESSAGES, type User } from '@portal/contracts';
import { deleteUser } from '../../api/admin';
import { ApiRequestError } from '../../api/http';
import { DEFAULT_AVATAR_URL } from '../../components/pictures';
import { ConfirmDialog } from '../../evidence/ConfirmDialog';
import { LoadMore } from '../../evidence/LoadMore';
import { refreshEvidence } from '../../evidence/queries';
import { useNotify } from '../../notifications/notify-context';
import { UserEvidenceDialog } from './UserEvidenceDialog';
import { UserInfoDialog, roleName } from './UserInfoDialog';
import { ADMIN_USERS_KEY, useAdminUsers } from './users-query';
import { LoadFailedAlert } from '../../components/LoadFailedAlert';

type Shown = { dialog: 'info' | 'evidence' | 'delete'; user: User } | null;

/** All users (loaded when the administration page shows users): information, their evidence, delete. */
export default function AdminUserList() {
  const client = useQueryClient();
  const notify = useNotify();
  const list = useAdminUsers();
  const [shown, setShown] = useState<Shown>(null);
  const [deleting, setDeleting] = useState(false);

  const remove = async (user: User) => {
    setDeleting(true);
    try {
      await deleteUser(user.id);
      notify({ message: MESSAGES.userDeleted, severity: 'success' });
      setShown(null);
      await client.invalidateQueries({ queryKey: ADMIN_USERS_KEY });
      void refreshEvidence(client);
    } catch (error) {
      console.warn('user delete failed', error);
      setShown(null);
      const reason = error instanceof ApiRequestError && error.isClientError ? ` ${error.message}` : '';
      notify({ message: `${MESSAGES.userDeleteFailed}${reason}`, severity: 'error' });
    } finally {
      setDeleting(false);
    }
  };

  let content;
  if (list.isPending) content = <Typography role="status">Loading...</Typography>;
  else if (list.isError && list.users.length === 0)
    content = <LoadFailedAlert onRetry={() => void list.refetch()}>The users could not be loaded.</LoadFailedAlert>;
  else
    content = (
      <List aria-label="Users" disablePadding>
        {list.users.map((user) => (
          <ListItem key={user.id} divider data-user-id={user.id} sx={{ flexWrap: 'wrap', gap: 1.5, py: 1.5 }}>
            <Avatar src={user.avatar_AWS_URL ?? DEFAULT_AVATAR_URL} alt="" sx={{ bgcolor: 'grey.300' }} />
            <Stack sx={{ minWidth: 0, flex: '1 1 160px' }}>
              <Typography sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>{user.username}</Typography>
              <Typography variant="body2" color="text.secondary" sx={{ overflowWrap: 'anywhere' }}>
                {`${user.full_name} · ${roleName(user.role)} · ${user.email_verified ? 'address confirmed' : 'address not confirmed'}`}
              </Typography>
            </Stack>
            <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap' }}>
              <Button
                size="small"
                variant="outlined"
                onClick={() => setShown({ dialog: 'info', user })}
                aria-label={`Info about ${user.username}`}
              >
                Info
              </Button>
              <Button
                size="small"
                variant="outlined"
                onClick={() => setShown({ dialog: 'evidence', user })}
                aria-label={`Evidence of ${user.username}`}
              >
                Evidence
              </Button>
              <Button
                size="small"
                color="error"
                onClick={() => setShown({ dialog: 'delete', user })}
                aria-label={`Delete ${user.username}`}
              >
                Delete
              </Button>
            </Stack>
          </ListItem>
        ))}
      </List>
    );

  return (
    <>
      {content}
      <LoadMore hasMore={list.hasNextPage} loading={list.isFetchingNextPage} onLoadMore={() => void list.fetchNextPage()} />
      {shown?.dialog === 'info' ? (
        <UserInfoDialog user={shown.user} onClose={() => setShown(null)} onSaved={(user) => setShown({ dialog: 'info', user })} />
      ) : null}
      {shown?.dialog === 'evidence' ? <UserEvidenceDialog user={shown.user} onClose={() => setShown(null)} /> : null}
      <ConfirmDialog
        open={shown?.dialog === 'delete'}
        title="Confirm Delete User"
        danger
        busy={deleting}
        onCancel={() => setShown(null)}
        onConfirm={() => {
          if (shown) void remove(shown.user);
        }}
      >
        {`Are you sure you want to delete the user ${shown?.user.username ?? ''}? Their evidence is deleted too.`}
      </ConfirmDialog>
    </>
  );
}
