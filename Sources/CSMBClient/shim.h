#pragma once
/* libsmbclient's header only (Debian puts it in /usr/include/samba-4.0, named here since no pkg-config flags
 * are used): the library is not linked but loaded with dlopen on the first SMB context (SMBClient module,
 * SMBLibrary), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <samba-4.0/libsmbclient.h>

/* The soname Debian's libsmbclient-dev links (the header carries no version): scripts/make-deb.py reads it from
 * here. */
#define FERMATA_SMBCLIENT_SONAME "libsmbclient.so.0"

/* Every libsmbclient function Fermata calls. Add a function here (and only here): the table's field gets the
 * exact type of libsmbclient's own declaration. */
#define FERMATA_SMBCLIENT_FUNCTIONS(X) \
    X(smbc_new_context) \
    X(smbc_free_context) \
    X(smbc_init_context) \
    X(smbc_setDebug) \
    X(smbc_setFunctionAuthData) \
    X(smbc_getFunctionStat) \
    X(smbc_getFunctionOpendir) \
    X(smbc_getFunctionReaddir) \
    X(smbc_getFunctionClosedir) \
    X(smbc_getFunctionOpen) \
    X(smbc_getFunctionRead) \
    X(smbc_getFunctionLseek) \
    X(smbc_getFunctionFstat) \
    X(smbc_getFunctionClose)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_smbclient_functions {
#define FERMATA_SMBCLIENT_FIELD(name) __typeof__(name) *name;
    FERMATA_SMBCLIENT_FUNCTIONS(FERMATA_SMBCLIENT_FIELD)
#undef FERMATA_SMBCLIENT_FIELD
} fermata_smbclient_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not
 * found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_smbclient_resolve(
    fermata_smbclient_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_SMBCLIENT_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_SMBCLIENT_FUNCTIONS(FERMATA_SMBCLIENT_RESOLVE)
#undef FERMATA_SMBCLIENT_RESOLVE
    return NULL;
}
