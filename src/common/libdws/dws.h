/* dws.h - umbrella header for libdws.
 *
 * libdws is the decision core of flux-dws: pure C11 + jansson, no Flux, no
 * I/O.  Each module has its own documented header; include this one to get
 * all of them (the cffi extension does).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_H
#define DWS_H

#include "breakdown.h"
#include "capacity.h"
#include "dataout.h"
#include "directive.h"
#include "engine/engine.h"
#include "error.h"
#include "explain.h"
#include "hostfind.h"
#include "hostindex.h"
#include "hostlist.h"
#include "idset.h"
#include "jgf.h"
#include "jobsm.h"
#include "jobwire.h"
#include "jsonio.h"
#include "labels.h"
#include "lustre.h"
#include "memory.h"
#include "outbuf.h"
#include "policy.h"
#include "rabbitconf.h"
#include "rabbitmap.h"
#include "rconfig.h"
#include "rssd.h"
#include "ruleset.h"
#include "servers.h"
#include "strbuf.h"
#include "wire.h"

#endif /* !DWS_H */
