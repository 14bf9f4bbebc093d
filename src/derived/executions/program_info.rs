//! [`ProgramInfo`] from HLO dumps: program keys, communication and collective schedules
//! looked up in the profile's own archive, then in the `--hlo` sources.

use super::building::{CollectiveSchedule, Comm, ProgramInfo};
use crate::error::Result;
use crate::hlo::{CollectiveOrder, Dumps, HloModule, Instruction, ProgramKey};
use crate::source::Archive;
use std::collections::HashSet;
use std::sync::Arc;

/// [`ProgramInfo`] from HLO dumps: each program's dump is looked for in every source in
/// turn (the profile's own archive first).
pub(super) struct ArchivePrograms<'a, 's> {
    pub(super) sources: &'a mut [(&'s mut Archive, &'s mut Dumps)],
    pub(super) profile: &'a str,
    pub(super) missing: HashSet<u64>,
    pub(super) unnamed: usize,
}

impl ArchivePrograms<'_, '_> {
    pub(super) fn key(&mut self, program_id: Option<u64>, name: &str) -> Result<ProgramKey> {
        for (archive, dumps) in self.sources.iter_mut() {
            match dumps.program_key(archive, self.profile, program_id, name)? {
                ProgramKey::Missing(_) => continue,
                key => return Ok(key),
            }
        }
        Ok(program_id.map_or(ProgramKey::Unknown, ProgramKey::Missing))
    }
}

impl ProgramInfo for ArchivePrograms<'_, '_> {
    fn program_key(&mut self, program_id: Option<u64>, name: &str) -> Result<String> {
        let key = self.key(program_id, name)?;
        if let ProgramKey::Missing(id) = key {
            self.missing.insert(id);
        }
        Ok(key.record())
    }

    fn communication(
        &mut self,
        program_id: u64,
        module: &str,
        instruction: &str,
    ) -> Result<Option<Comm>> {
        let Some(hlo) = self.dump(program_id, module)? else {
            return Ok(None);
        };
        let Some(inst) = hlo.instruction(instruction) else {
            self.unnamed += 1;
            return Ok(None);
        };
        comm_of(&inst)
    }

    fn instruction_id(
        &mut self,
        program_id: u64,
        module: &str,
        instruction: &str,
    ) -> Result<Option<Option<i64>>> {
        Ok(self
            .dump(program_id, module)?
            .map(|hlo| hlo.instruction(instruction).map(|i| i.id())))
    }

    fn collective_schedule(&mut self, program_id: u64, module: &str) -> Result<CollectiveSchedule> {
        let Some(hlo) = self.dump(program_id, module)? else {
            return Ok(CollectiveSchedule::Unknown(
                "there is no HLO dump of the program".into(),
            ));
        };
        Ok(match hlo.collective_order()? {
            CollectiveOrder::Unknown(why) => CollectiveSchedule::Unknown(why),
            CollectiveOrder::Known(insts) => {
                let mut order = Vec::with_capacity(insts.len());
                for inst in insts {
                    if let Some(comm) = comm_of(&inst)? {
                        order.push((inst.name().to_string(), comm));
                    }
                }
                CollectiveSchedule::Known(order)
            }
        })
    }
}

impl ArchivePrograms<'_, '_> {
    /// The dump of program `program_id` (module `module`), from the first source that has
    /// it.
    fn dump(&mut self, program_id: u64, module: &str) -> Result<Option<Arc<HloModule>>> {
        for (archive, dumps) in self.sources.iter_mut() {
            if let Some(hlo) = dumps.load(archive, self.profile, program_id, module)? {
                return Ok(Some(hlo));
            }
        }
        Ok(None)
    }
}

/// What a communicating instruction moves, as the records say it.
fn comm_of(inst: &Instruction<'_>) -> Result<Option<Comm>> {
    Ok(inst.collective()?.map(|c| Comm {
        collective: c.kind.as_str().to_string(),
        group_size: c.group_size as u32,
        message_bytes: c.message_bytes,
    }))
}
