import Alert from '@mui/material/Alert';
import Avatar from '@mui/material/Avatar';
import Stack from '@mui/material/Stack';
import { useState } from 'react';
import { MESSAGES } from '@portal/contracts';
import { useCurrentUser } from '../../auth/useCurrentUser';
import { ConfirmAddressNotice } from '../../components/ConfirmAddressNotice';
import { Page } from '../../components/Page';
import { PageLoading } from '../../components/PageLoading';
import { profilePictureOf } from '../../components/pictures';
import { usePublicConfig } from '../../config/usePublicConfig';
import { OnboardingDialog } from './OnboardingDialog';
import { ProfileDetails } from './ProfileDetails';
import { ProfileEditForm } from './ProfileEditForm';

/** /user: the participant's profile (read and edit views) and, on the first visit, the onboarding video. */
export default function ProfilePage() {
  const { user } = useCurrentUser();
  const { data: config } = usePublicConfig();
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  if (!user) return <PageLoading />;

  const heading = user.pronouns ? `${user.username} (${user.pronouns})` : user.username;
  return (
    <Page title={heading}>
      <Stack alignItems="center" sx={{ mb: 2 }}>
        <Avatar src={profilePictureOf(user)} alt={`Picture of ${user.username}`} sx={{ width: 112, height: 112, bgcolor: 'grey.300' }} />
      </Stack>
      {!user.email_verified && !editing ? <ConfirmAddressNotice /> : null}
      {saved && !editing ? (
        <Alert severity="success" onClose={() => setSaved(false)} sx={{ mb: 2 }}>
          {MESSAGES.userUpdated}
        </Alert>
      ) : null}
      {editing ? (
        <ProfileEditForm
          user={user}
          onCancel={() => setEditing(false)}
          onSaved={() => {
            setSaved(true);
            setEditing(false);
          }}
        />
      ) : (
        <ProfileDetails
          user={user}
          onEdit={() => {
            setSaved(false);
            setEditing(true);
          }}
        />
      )}
      {!user.video_watched && config ? <OnboardingDialog user={user} config={config} /> : null}
    </Page>
  );
}
