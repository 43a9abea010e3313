//! `enum Status` of OmClientProtocol.proto, with every value's name (unknown values are
//! kept as numbers, so a newer OM's status still reads back).

/// `enum Status` of OmClientProtocol.proto. Unknown values are kept as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Status(pub i32);

const STATUS_NAMES: &[(i32, &str)] = &[
    (1, "OK"),
    (2, "VOLUME_NOT_UNIQUE"),
    (3, "VOLUME_NOT_FOUND"),
    (4, "VOLUME_NOT_EMPTY"),
    (5, "VOLUME_ALREADY_EXISTS"),
    (6, "USER_NOT_FOUND"),
    (7, "USER_TOO_MANY_VOLUMES"),
    (8, "BUCKET_NOT_FOUND"),
    (9, "BUCKET_NOT_EMPTY"),
    (10, "BUCKET_ALREADY_EXISTS"),
    (11, "KEY_ALREADY_EXISTS"),
    (12, "KEY_NOT_FOUND"),
    (13, "INVALID_KEY_NAME"),
    (14, "ACCESS_DENIED"),
    (15, "INTERNAL_ERROR"),
    (16, "KEY_ALLOCATION_ERROR"),
    (17, "KEY_DELETION_ERROR"),
    (18, "KEY_RENAME_ERROR"),
    (19, "METADATA_ERROR"),
    (20, "OM_NOT_INITIALIZED"),
    (21, "SCM_VERSION_MISMATCH_ERROR"),
    (24, "INITIATE_MULTIPART_UPLOAD_ERROR"),
    (25, "MULTIPART_UPLOAD_PARTFILE_ERROR"),
    (26, "NO_SUCH_MULTIPART_UPLOAD_ERROR"),
    (27, "MISMATCH_MULTIPART_LIST"),
    (28, "MISSING_UPLOAD_PARTS"),
    (29, "COMPLETE_MULTIPART_UPLOAD_ERROR"),
    (30, "ENTITY_TOO_SMALL"),
    (31, "ABORT_MULTIPART_UPLOAD_FAILED"),
    (32, "S3_SECRET_NOT_FOUND"),
    (33, "INVALID_AUTH_METHOD"),
    (34, "INVALID_TOKEN"),
    (35, "TOKEN_EXPIRED"),
    (36, "TOKEN_ERROR_OTHER"),
    (37, "LIST_MULTIPART_UPLOAD_PARTS_FAILED"),
    (38, "SCM_IN_SAFE_MODE"),
    (39, "INVALID_REQUEST"),
    (40, "BUCKET_ENCRYPTION_KEY_NOT_FOUND"),
    (41, "UNKNOWN_CIPHER_SUITE"),
    (42, "INVALID_KMS_PROVIDER"),
    (43, "TOKEN_CREATION_ERROR"),
    (44, "FILE_NOT_FOUND"),
    (45, "DIRECTORY_NOT_FOUND"),
    (46, "FILE_ALREADY_EXISTS"),
    (47, "NOT_A_FILE"),
    (48, "PERMISSION_DENIED"),
    (49, "TIMEOUT"),
    (50, "PREFIX_NOT_FOUND"),
    (52, "RATIS_ERROR"),
    (53, "INVALID_PATH_IN_ACL_REQUEST"),
    (54, "USER_MISMATCH"),
    (55, "INVALID_PART"),
    (56, "INVALID_PART_ORDER"),
    (57, "SCM_GET_PIPELINE_EXCEPTION"),
    (58, "INVALID_BUCKET_NAME"),
    (59, "CANNOT_CREATE_DIRECTORY_AT_ROOT"),
    (60, "DIRECTORY_ALREADY_EXISTS"),
    (61, "INVALID_VOLUME_NAME"),
    (62, "PARTIAL_DELETE"),
    (63, "DETECTED_LOOP_IN_BUCKET_LINKS"),
    (64, "NOT_SUPPORTED_OPERATION"),
    (65, "PARTIAL_RENAME"),
    (66, "QUOTA_EXCEEDED"),
    (67, "QUOTA_ERROR"),
    (68, "DIRECTORY_NOT_EMPTY"),
    (69, "PERSIST_UPGRADE_TO_LAYOUT_VERSION_FAILED"),
    (70, "REMOVE_UPGRADE_TO_LAYOUT_VERSION_FAILED"),
    (71, "UPDATE_LAYOUT_VERSION_FAILED"),
    (72, "LAYOUT_FEATURE_FINALIZATION_FAILED"),
    (73, "PREPARE_FAILED"),
    (74, "NOT_SUPPORTED_OPERATION_WHEN_PREPARED"),
    (75, "NOT_SUPPORTED_OPERATION_PRIOR_FINALIZATION"),
    (76, "TENANT_NOT_FOUND"),
    (77, "TENANT_ALREADY_EXISTS"),
    (78, "INVALID_TENANT_ID"),
    (79, "ACCESS_ID_NOT_FOUND"),
    (80, "TENANT_USER_ACCESS_ID_ALREADY_EXISTS"),
    (81, "INVALID_TENANT_USERNAME"),
    (82, "INVALID_ACCESS_ID"),
    (83, "TENANT_AUTHORIZER_ERROR"),
    (84, "VOLUME_IS_REFERENCED"),
    (85, "TENANT_NOT_EMPTY"),
    (86, "FEATURE_NOT_ENABLED"),
    (87, "INVALID_SNAPSHOT_ERROR"),
    (88, "CONTAINS_SNAPSHOT"),
    (89, "SSL_CONNECTION_FAILURE"),
    (90, "RENAME_OPEN_FILE"),
    (91, "UNAUTHORIZED"),
    (92, "S3_SECRET_ALREADY_EXISTS"),
    (93, "INVALID_PATH"),
    (94, "TOO_MANY_BUCKETS"),
    (95, "KEY_UNDER_LEASE_RECOVERY"),
    (96, "KEY_ALREADY_CLOSED"),
    (97, "KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD"),
    // From the 2.2.0 jar's OmClientProtocol.proto (ozone-interface-client-2.2.0-sources.jar).
    (98, "TOO_MANY_SNAPSHOTS"),
    (99, "ETAG_MISMATCH"),
    (100, "ETAG_NOT_AVAILABLE"),
    (101, "ATOMIC_WRITE_CONFLICT"),
];

impl Status {
    pub const OK: Self = Self(1);
    pub const VOLUME_ALREADY_EXISTS: Self = Self(5);
    pub const BUCKET_NOT_FOUND: Self = Self(8);
    pub const BUCKET_ALREADY_EXISTS: Self = Self(10);
    pub const KEY_ALREADY_EXISTS: Self = Self(11);
    /// An atomic rewrite whose key changed between its open and its commit.
    pub const ATOMIC_WRITE_CONFLICT: Self = Self(101);
    pub const KEY_NOT_FOUND: Self = Self(12);
    pub const INTERNAL_ERROR: Self = Self(15);
    pub const METADATA_ERROR: Self = Self(19);
    pub const TIMEOUT: Self = Self(49);
    pub const RATIS_ERROR: Self = Self(52);
    pub const KEY_UNDER_LEASE_RECOVERY: Self = Self(95);
    pub const KEY_ALREADY_CLOSED: Self = Self(96);
    pub const KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD: Self = Self(97);

    /// The enum value's name in the .proto, or `Status(<n>)` for a value this table lacks.
    pub fn name(self) -> String {
        STATUS_NAMES
            .iter()
            .find(|(n, _)| *n == self.0)
            .map(|(_, s)| (*s).to_owned())
            .unwrap_or_else(|| format!("Status({})", self.0))
    }

    /// Looks a name up (the inverse of [`Status::name`] for known values).
    pub fn from_name(name: &str) -> Option<Self> {
        STATUS_NAMES
            .iter()
            .find(|(_, s)| *s == name)
            .map(|(n, _)| Self(*n))
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names() {
        assert_eq!(Status::KEY_ALREADY_EXISTS.name(), "KEY_ALREADY_EXISTS");
        assert_eq!(Status(23).name(), "Status(23)");
        assert_eq!(Status::from_name("RATIS_ERROR"), Some(Status::RATIS_ERROR));
    }
}
